-- 0009: reserved for a change made in parallel; this placeholder keeps the numbering
-- without gaps and is replaced by that change's 0009 when both land.
SELECT 1;
