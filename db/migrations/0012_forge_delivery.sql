-- 0012: forge connections (where a repository's verdicts are reported), the state each
-- pipeline was last reported in, and the durable queue of outgoing calls (forge
-- statuses and check runs, notification webhooks).

-- One connection per repository. The token is never stored: token_file names the file
-- the coordinator reads it from when it sends. A connection the forge refused (401,
-- 403) is broken until an operator puts it again; its deliveries wait meanwhile.
CREATE TABLE forge_connections (
  repo          TEXT PRIMARY KEY REFERENCES repositories(name),
  kind          TEXT NOT NULL CHECK (kind IN ('github', 'gitea', 'gitlab')),
  api_url       TEXT NOT NULL,
  project       TEXT NOT NULL,
  token_file    TEXT NOT NULL,
  mode          TEXT NOT NULL DEFAULT 'status' CHECK (mode IN ('check', 'status')),
  broken_reason TEXT,
  broken_ms     INTEGER,
  created_ms    INTEGER NOT NULL,
  updated_ms    INTEGER NOT NULL
);

-- The state a push pipeline was last reported in (new: not yet; queued, in_progress,
-- completed) to its repository's forge and the notification webhooks, and the GitHub
-- check run that shows it once created. The row is written with the pipeline, so a
-- pipeline is reported however soon after its creation the coordinator stops.
CREATE TABLE forge_reports (
  pipeline_id  INTEGER NOT NULL REFERENCES pipelines(id),
  repo         TEXT NOT NULL,
  state        TEXT NOT NULL CHECK (state IN ('new', 'queued', 'in_progress', 'completed')),
  check_run_id INTEGER,
  updated_ms   INTEGER NOT NULL,
  PRIMARY KEY (pipeline_id, repo)
);
CREATE INDEX forge_reports_open ON forge_reports(pipeline_id) WHERE state != 'completed';

-- Every outgoing call. Deliveries of one subject (a pipeline's reports to one forge, one
-- webhook URL) go out in id order, one at a time. The request's secrets (tokens,
-- signatures) are added when it is sent, never stored.
CREATE TABLE deliveries (
  id              INTEGER PRIMARY KEY,
  kind            TEXT NOT NULL CHECK (kind IN ('check_run', 'commit_status', 'webhook')),
  subject         TEXT NOT NULL,
  repo            TEXT,
  pipeline_id     INTEGER,
  event           TEXT NOT NULL,
  commit_sha      TEXT NOT NULL DEFAULT '',
  method          TEXT NOT NULL,
  url             TEXT NOT NULL,
  body            TEXT NOT NULL,
  state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  max_attempts    INTEGER NOT NULL CHECK (max_attempts >= 1),
  next_attempt_ms INTEGER NOT NULL,
  last_status     INTEGER,
  last_error      TEXT NOT NULL DEFAULT '',
  created_ms      INTEGER NOT NULL,
  updated_ms      INTEGER NOT NULL,
  finished_ms     INTEGER
);
CREATE INDEX deliveries_pending ON deliveries(state, next_attempt_ms) WHERE state = 'pending';
CREATE INDEX deliveries_by_subject ON deliveries(subject, id);
