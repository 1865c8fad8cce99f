-- 0009: retries back off. A job sent back to the queue after a failed or expired
-- attempt is claimable again only from not_before_ms, and by the runner that held that
-- attempt (retry_runner_id) only from retry_runner_after_ms. NULL: claimable now.
ALTER TABLE jobs ADD COLUMN not_before_ms INTEGER;
ALTER TABLE jobs ADD COLUMN retry_runner_id INTEGER;
ALTER TABLE jobs ADD COLUMN retry_runner_after_ms INTEGER;
