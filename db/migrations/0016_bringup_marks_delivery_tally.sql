-- 0016: what the notification webhooks were last told of each target's bring-up (its
-- stage counts, so a drop is seen as a regression, and the milestones already announced,
-- each once), and the tally of delivered deliveries pruned from the queue (the queue
-- stays bounded; the attempt counter on /metrics never goes back).

CREATE TABLE bringup_marks (
  target          TEXT PRIMARY KEY,
  commit_sha      TEXT,
  counts_json     TEXT NOT NULL,
  milestones_json TEXT NOT NULL DEFAULT '[]',
  updated_ms      INTEGER NOT NULL
);

CREATE TABLE delivery_tally (
  id              INTEGER PRIMARY KEY CHECK (id = 1),
  pruned          INTEGER NOT NULL DEFAULT 0,
  pruned_attempts INTEGER NOT NULL DEFAULT 0
);
INSERT INTO delivery_tally(id) VALUES (1);

CREATE INDEX deliveries_delivered ON deliveries(finished_ms) WHERE state = 'delivered';

-- Where a variant's kernel is in the repository (the build runner reads it from the
-- kernels tree): a check run annotates that line when the variant's resources regress.
ALTER TABLE build_records ADD COLUMN source_path TEXT;
ALTER TABLE build_records ADD COLUMN source_line INTEGER;
