-- 0018: a bisection can be cancelled (by hand, or when one of its probes is), and keeps
-- where the bad end's evidence came from beside the good end's (toolkit, driver, runner),
-- so a slowdown between two drivers or toolkits is told apart from one of the code.
-- SQLite cannot change a CHECK in place: both tables are built again (the probes' rows
-- reference the bisections'), their rows copied, and the new ones take the old names.
CREATE TABLE bisections_0018 (
  id            INTEGER PRIMARY KEY,
  kind          TEXT NOT NULL CHECK (kind IN ('perf_regression', 'numerics_failure', 'build_failure')),
  origin        TEXT NOT NULL CHECK (origin IN ('auto', 'manual')),
  repo          TEXT NOT NULL DEFAULT '',
  target        TEXT NOT NULL,
  gpu_model     TEXT NOT NULL DEFAULT '',
  arch          TEXT NOT NULL DEFAULT '',
  good_sha      TEXT NOT NULL,
  bad_sha       TEXT NOT NULL,
  commits_json  TEXT NOT NULL,
  cases_json    TEXT NOT NULL,
  good_env_json TEXT NOT NULL DEFAULT '{}',
  bad_env_json  TEXT NOT NULL DEFAULT '{}',  -- toolkit, driver and runner of the bad end's evidence
  -- running; done (found, or what moved instead); failed (gave up: too many probes, a
  -- probe failing on the machine again); cancelled (by hand, or a probe cancelled)
  state         TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done', 'failed', 'cancelled')),
  cause         TEXT CHECK (cause IN ('code', 'toolkit', 'driver', 'runner', 'noise')),
  first_bad_sha TEXT,
  effect        REAL,
  uncertainty   REAL,
  summary       TEXT NOT NULL DEFAULT '',
  outcome_json  TEXT NOT NULL DEFAULT '{}',
  created_ms    INTEGER NOT NULL,
  updated_ms    INTEGER NOT NULL,
  finished_ms   INTEGER
);
INSERT INTO bisections_0018(id, kind, origin, repo, target, gpu_model, arch, good_sha, bad_sha, commits_json,
                            cases_json, good_env_json, state, cause, first_bad_sha, effect, uncertainty, summary,
                            outcome_json, created_ms, updated_ms, finished_ms)
  SELECT id, kind, origin, repo, target, gpu_model, arch, good_sha, bad_sha, commits_json, cases_json, good_env_json,
         state, cause, first_bad_sha, effect, uncertainty, summary, outcome_json, created_ms, updated_ms, finished_ms
  FROM bisections;

CREATE TABLE bisection_probes_0018 (
  pipeline_id  INTEGER PRIMARY KEY REFERENCES pipelines(id),
  bisection_id INTEGER NOT NULL REFERENCES bisections_0018(id),
  commit_sha   TEXT NOT NULL,
  created_ms   INTEGER NOT NULL
);
INSERT INTO bisection_probes_0018(pipeline_id, bisection_id, commit_sha, created_ms)
  SELECT pipeline_id, bisection_id, commit_sha, created_ms FROM bisection_probes;

DROP TABLE bisection_probes;
DROP TABLE bisections;
ALTER TABLE bisections_0018 RENAME TO bisections;
ALTER TABLE bisection_probes_0018 RENAME TO bisection_probes;
CREATE UNIQUE INDEX bisections_once ON bisections(bad_sha, target, gpu_model, kind);
CREATE INDEX bisections_by_good ON bisections(good_sha);
CREATE INDEX bisection_probes_by_bisection ON bisection_probes(bisection_id, pipeline_id);
