-- 0005: push deliveries, branch heads, re-measures of suspected regressions and the
-- GPU/driver revalidations opened by the fleet watch.

-- One row per webhook delivery accepted; the primary key deduplicates redeliveries.
CREATE TABLE hook_deliveries (
  delivery_id TEXT PRIMARY KEY,
  source      TEXT NOT NULL CHECK (source IN ('github','gitea','gitlab','git')),
  repo        TEXT NOT NULL,
  ref         TEXT NOT NULL DEFAULT '',
  before_sha  TEXT NOT NULL DEFAULT '',
  after_sha   TEXT NOT NULL DEFAULT '',
  outcome     TEXT NOT NULL CHECK (outcome IN ('pipeline','deleted','ignored')),
  pipeline_id INTEGER REFERENCES pipelines(id),
  note        TEXT NOT NULL DEFAULT '',
  received_ms INTEGER NOT NULL
);
CREATE INDEX hook_deliveries_by_ref ON hook_deliveries(repo, ref, received_ms);

-- The head a push left a branch at; sha is '' once the branch was deleted.
CREATE TABLE branch_heads (
  repo       TEXT NOT NULL,
  ref        TEXT NOT NULL,
  sha        TEXT NOT NULL,
  forced     INTEGER NOT NULL DEFAULT 0 CHECK (forced IN (0, 1)),
  updated_ms INTEGER NOT NULL,
  PRIMARY KEY (repo, ref)
) WITHOUT ROWID;

-- A performance regression counts only once measured again: one re-measure check job
-- per (commit, target, GPU model), whatever the number of suspects in it.
CREATE TABLE remeasures (
  commit_sha     TEXT NOT NULL,
  target         TEXT NOT NULL,
  gpu_model      TEXT NOT NULL,
  job_id         INTEGER NOT NULL REFERENCES jobs(id),
  instances_json TEXT NOT NULL DEFAULT '[]',
  created_ms     INTEGER NOT NULL,
  PRIMARY KEY (commit_sha, target, gpu_model)
) WITHOUT ROWID;

-- A GPU model, arch or driver seen for the first time opens one revalidation pipeline;
-- the primary key keeps two runners registering at once from opening two.
CREATE TABLE revalidations (
  gpu_model       TEXT NOT NULL,
  driver          TEXT NOT NULL,
  arch            TEXT NOT NULL,
  previous_driver TEXT NOT NULL DEFAULT '',
  pipeline_id     INTEGER REFERENCES pipelines(id),
  created_ms      INTEGER NOT NULL,
  PRIMARY KEY (gpu_model, driver)
) WITHOUT ROWID;

-- What the fleet already ran on before this migration is not new.
INSERT INTO revalidations(gpu_model, driver, arch, previous_driver, pipeline_id, created_ms)
  SELECT d.gpu_model, d.driver, m.arch, '', NULL, d.first_seen_ms
    FROM gpu_drivers d JOIN gpu_models m ON m.name = d.gpu_model;
