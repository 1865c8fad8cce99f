-- 0015: bisections. A counted reason of a verdict (a confirmed slowdown, a new numerics
-- failure, a new build failure) between a good and a bad commit with commits in between
-- is searched for its first bad commit; each probe is a pipeline of one commit that
-- builds the affected variants and checks the affected cases on the GPU model that saw
-- the reason. The search itself (porting/bisect.h) is decided again from the probes each
-- time one ends; these rows keep what it needs and what it found.
CREATE TABLE bisections (
  id            INTEGER PRIMARY KEY,
  kind          TEXT NOT NULL CHECK (kind IN ('perf_regression', 'numerics_failure', 'build_failure')),
  origin        TEXT NOT NULL CHECK (origin IN ('auto', 'manual')),
  repo          TEXT NOT NULL DEFAULT '',
  target        TEXT NOT NULL,
  gpu_model     TEXT NOT NULL DEFAULT '',   -- '' for a build failure
  arch          TEXT NOT NULL DEFAULT '',
  good_sha      TEXT NOT NULL,
  bad_sha       TEXT NOT NULL,
  commits_json  TEXT NOT NULL,              -- good first, then each first parent up to bad
  cases_json    TEXT NOT NULL,              -- the cases followed and the verdict's figures at each end
  good_env_json TEXT NOT NULL DEFAULT '{}', -- toolkit, driver and runner of the good end's evidence
  state         TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done', 'failed')),
  cause         TEXT CHECK (cause IN ('code', 'toolkit', 'driver', 'runner', 'noise')),
  first_bad_sha TEXT,
  effect        REAL,
  uncertainty   REAL,
  summary       TEXT NOT NULL DEFAULT '',
  outcome_json  TEXT NOT NULL DEFAULT '{}',  -- suspects, per-case effects, the judged commits
  created_ms    INTEGER NOT NULL,
  updated_ms    INTEGER NOT NULL,
  finished_ms   INTEGER
);
-- One bisection per reason: a verdict asked again starts nothing new.
CREATE UNIQUE INDEX bisections_once ON bisections(bad_sha, target, gpu_model, kind);
CREATE INDEX bisections_by_good ON bisections(good_sha);

-- A probe pipeline of a bisection. Its records stay out of commit verdicts and do not
-- make its commit validated: a probe measures a commit for the search, not for itself.
CREATE TABLE bisection_probes (
  pipeline_id  INTEGER PRIMARY KEY REFERENCES pipelines(id),
  bisection_id INTEGER NOT NULL REFERENCES bisections(id),
  commit_sha   TEXT NOT NULL,
  created_ms   INTEGER NOT NULL
);
CREATE INDEX bisection_probes_by_bisection ON bisection_probes(bisection_id, pipeline_id);
