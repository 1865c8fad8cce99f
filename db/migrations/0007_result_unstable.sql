-- 0007: a figure whose bench rounds disagreed beyond the measured noise, even after a
-- re-measure, is stored as unstable: it never wins a tie or counts as a regression on
-- its own.
ALTER TABLE results ADD COLUMN unstable INTEGER NOT NULL DEFAULT 0 CHECK (unstable IN (0, 1));
