-- 0001: catalog, commits, pipelines, the job queue and runners.
-- Times are Unix milliseconds. Status columns are CHECKed against the text forms in
-- db/include/kport/db/types.h; *_json columns hold one JSON document each.

CREATE TABLE targets (
  name           TEXT PRIMARY KEY,
  arch           TEXT NOT NULL,
  features_json  TEXT NOT NULL DEFAULT '{}',
  toolkit        TEXT NOT NULL DEFAULT '',
  first_seen_ms  INTEGER NOT NULL,
  updated_ms     INTEGER NOT NULL,
  is_new         INTEGER NOT NULL DEFAULT 1 CHECK (is_new IN (0, 1))
);

-- Which GPU arches check a target's builds (sm_80 code also runs on 8.6 and 8.9).
CREATE TABLE target_check_arches (
  target TEXT NOT NULL REFERENCES targets(name) ON DELETE CASCADE,
  arch   TEXT NOT NULL,
  PRIMARY KEY (target, arch)
) WITHOUT ROWID;

CREATE TABLE gpu_models (
  name          TEXT PRIMARY KEY,
  arch          TEXT NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms  INTEGER NOT NULL
);

CREATE TABLE gpu_drivers (
  gpu_model     TEXT NOT NULL REFERENCES gpu_models(name) ON DELETE CASCADE,
  driver        TEXT NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  PRIMARY KEY (gpu_model, driver)
) WITHOUT ROWID;

CREATE TABLE kernel_families (
  name TEXT PRIMARY KEY
);

CREATE TABLE kernel_variants (
  family        TEXT NOT NULL REFERENCES kernel_families(name),
  name          TEXT NOT NULL,
  features_json TEXT NOT NULL DEFAULT '[]',
  PRIMARY KEY (family, name)
) WITHOUT ROWID;

CREATE TABLE kernel_instances (
  name          TEXT PRIMARY KEY,
  family        TEXT NOT NULL,
  variant       TEXT NOT NULL,
  features_json TEXT NOT NULL DEFAULT '[]',
  config_json   TEXT NOT NULL DEFAULT '{}',
  updated_ms    INTEGER NOT NULL,
  FOREIGN KEY (family, variant) REFERENCES kernel_variants(family, name)
);
CREATE INDEX kernel_instances_by_family ON kernel_instances(family, variant);

CREATE TABLE repositories (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE,
  url        TEXT NOT NULL,
  created_ms INTEGER NOT NULL
);

CREATE TABLE commits (
  sha        TEXT PRIMARY KEY,
  repo_id    INTEGER NOT NULL REFERENCES repositories(id),
  parent_sha TEXT,
  message    TEXT NOT NULL DEFAULT '',
  author     TEXT NOT NULL DEFAULT '',
  time_ms    INTEGER NOT NULL,
  created_ms INTEGER NOT NULL
);

CREATE TABLE pipelines (
  id         INTEGER PRIMARY KEY,
  reason     TEXT NOT NULL
             CHECK (reason IN ('push','new_target','new_driver','new_gpu','manual')),
  repo       TEXT NOT NULL DEFAULT '',
  ref        TEXT NOT NULL DEFAULT '',
  commit_sha TEXT NOT NULL DEFAULT '',
  note       TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL
);
CREATE INDEX pipelines_by_commit ON pipelines(commit_sha);

CREATE TABLE runners (
  id                INTEGER PRIMARY KEY,
  name              TEXT NOT NULL,
  role              TEXT NOT NULL CHECK (role IN ('build','gpu')),
  token_hash        TEXT NOT NULL UNIQUE,   -- sha256 hex of the token; never the token
  toolkit           TEXT NOT NULL DEFAULT '',
  cores             INTEGER NOT NULL DEFAULT 0,
  gpu_model         TEXT NOT NULL DEFAULT '',
  gpu_uuid          TEXT NOT NULL DEFAULT '',
  arch              TEXT NOT NULL DEFAULT '',
  driver            TEXT NOT NULL DEFAULT '',
  extra_json        TEXT NOT NULL DEFAULT '{}',
  registered_ms     INTEGER NOT NULL,
  last_heartbeat_ms INTEGER NOT NULL,
  deregistered_ms   INTEGER,
  current_job       INTEGER REFERENCES jobs(id)
);
CREATE INDEX runners_by_arch ON runners(role, arch, last_heartbeat_ms)
  WHERE deregistered_ms IS NULL;

CREATE TABLE runner_targets (
  runner_id INTEGER NOT NULL REFERENCES runners(id) ON DELETE CASCADE,
  target    TEXT NOT NULL,
  PRIMARY KEY (runner_id, target)
) WITHOUT ROWID;

-- Stored status never holds 'awaiting_runner': it is derived at query time.
CREATE TABLE jobs (
  id               INTEGER PRIMARY KEY,
  pipeline_id      INTEGER NOT NULL REFERENCES pipelines(id),
  kind             TEXT NOT NULL CHECK (kind IN ('build','check')),
  status           TEXT NOT NULL DEFAULT 'queued'
                   CHECK (status IN ('queued','running','succeeded','failed','cancelled')),
  commit_sha       TEXT NOT NULL,
  target           TEXT NOT NULL,
  arch             TEXT,
  gpu_model        TEXT,
  depends_on       INTEGER REFERENCES jobs(id),
  attempt          INTEGER NOT NULL DEFAULT 0,
  max_attempts     INTEGER NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
  runner_id        INTEGER REFERENCES runners(id),
  lease_expires_ms INTEGER,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  payload_json     TEXT NOT NULL DEFAULT '{}',
  failure_reason   TEXT,
  created_ms       INTEGER NOT NULL,
  started_ms       INTEGER,
  finished_ms      INTEGER,
  CHECK (kind = 'build' OR arch IS NOT NULL)
);
-- Partial indexes keep claim() and expire_leases() proportional to the live queue.
CREATE INDEX jobs_queued_build ON jobs(target, id) WHERE status = 'queued' AND kind = 'build';
CREATE INDEX jobs_queued_check ON jobs(arch, id) WHERE status = 'queued' AND kind = 'check';
CREATE INDEX jobs_running_lease ON jobs(lease_expires_ms) WHERE status = 'running';
CREATE INDEX jobs_by_status ON jobs(status, kind);
CREATE INDEX jobs_by_pipeline ON jobs(pipeline_id, id);
CREATE INDEX jobs_by_commit ON jobs(commit_sha, status);
CREATE INDEX jobs_by_dependency ON jobs(depends_on) WHERE depends_on IS NOT NULL;

CREATE TABLE job_logs (
  seq        INTEGER PRIMARY KEY,
  job_id     INTEGER NOT NULL REFERENCES jobs(id),
  attempt    INTEGER NOT NULL,
  created_ms INTEGER NOT NULL,
  text       TEXT NOT NULL
);
CREATE INDEX job_logs_by_job ON job_logs(job_id, seq);
