-- 0002: artifacts, build records, results and the best-candidate summary.

CREATE TABLE artifacts (
  sha256     TEXT PRIMARY KEY CHECK (length(sha256) = 64),
  size       INTEGER NOT NULL,
  name       TEXT NOT NULL DEFAULT '',
  kind       TEXT NOT NULL DEFAULT '',
  path       TEXT NOT NULL,
  created_ms INTEGER NOT NULL
);

CREATE TABLE build_records (
  id                     INTEGER PRIMARY KEY,
  job_id                 INTEGER REFERENCES jobs(id),
  attempt                INTEGER NOT NULL DEFAULT 0,
  commit_sha             TEXT NOT NULL,
  target                 TEXT NOT NULL,
  family                 TEXT NOT NULL,
  variant                TEXT NOT NULL,
  status                 TEXT NOT NULL
                         CHECK (status IN ('ok','not_applicable','compile_error','timeout')),
  message                TEXT NOT NULL DEFAULT '',
  registers              INTEGER,
  spill_stores_bytes     INTEGER,
  spill_loads_bytes      INTEGER,
  shared_mem_bytes       INTEGER,
  stack_frame_bytes      INTEGER,
  constant_mem_bytes     INTEGER,
  instruction_audit_json TEXT NOT NULL DEFAULT '{}',
  artifact_sha256        TEXT REFERENCES artifacts(sha256),
  created_ms             INTEGER NOT NULL
);
-- Idempotent upload: one record per job attempt, target and variant.
CREATE UNIQUE INDEX build_records_upload ON build_records(job_id, attempt, target, variant)
  WHERE job_id IS NOT NULL;
CREATE INDEX build_records_by_target ON build_records(target, family, variant, id);
CREATE INDEX build_records_by_commit ON build_records(commit_sha, status);

-- Canonical shape text and its parsed dimensions, for nearest-shape search.
CREATE TABLE shapes (
  shape     TEXT PRIMARY KEY,
  dims_json TEXT NOT NULL,       -- [["m",4096],["n",4096],["k",4096]]
  numel     REAL NOT NULL         -- product of the dims
);

CREATE TABLE results (
  id                 INTEGER PRIMARY KEY,
  job_id             INTEGER REFERENCES jobs(id),
  attempt            INTEGER NOT NULL DEFAULT 0,
  commit_sha         TEXT NOT NULL,
  target             TEXT NOT NULL,
  family             TEXT NOT NULL,
  variant            TEXT NOT NULL,
  instance           TEXT NOT NULL,
  dtype              TEXT NOT NULL,
  shape              TEXT NOT NULL REFERENCES shapes(shape),
  toolkit            TEXT NOT NULL DEFAULT '',
  runner_id          INTEGER REFERENCES runners(id),
  gpu_model          TEXT NOT NULL,
  gpu_uuid           TEXT NOT NULL DEFAULT '',
  arch               TEXT NOT NULL DEFAULT '',
  driver             TEXT NOT NULL DEFAULT '',
  sm_clock_mhz       REAL,
  env_json           TEXT NOT NULL DEFAULT '{}',
  status             TEXT NOT NULL
                     CHECK (status IN ('passed','failed','crashed','timeout','unsupported')),
  message            TEXT NOT NULL DEFAULT '',
  max_abs_err        REAL,
  max_rel_err        REAL,
  normwise_rel_err   REAL,
  nan_inf_count      INTEGER,
  tolerance          REAL,
  seed               INTEGER,
  median_us          REAL,
  stddev_us          REAL,
  samples            INTEGER,
  tflops             REAL,
  gbps               REAL,
  baseline_name      TEXT NOT NULL DEFAULT '',
  baseline_median_us REAL,
  ratio              REAL,
  created_ms         INTEGER NOT NULL
);
CREATE UNIQUE INDEX results_upload ON results(job_id, attempt, instance, dtype, shape)
  WHERE job_id IS NOT NULL;
CREATE INDEX results_by_gpu ON results(gpu_model, family, dtype, shape);
CREATE INDEX results_by_commit ON results(commit_sha, id);
CREATE INDEX results_by_target ON results(target, family, variant, status, arch);

-- Results are immutable, so the fastest passing median per (gpu_model, family, dtype,
-- shape, instance) only ever improves: a trigger keeps it, and the best-kernel query
-- reads a handful of rows by primary-key prefix instead of aggregating a million.
CREATE TABLE best_candidates (
  gpu_model    TEXT NOT NULL,
  family       TEXT NOT NULL,
  dtype        TEXT NOT NULL,
  shape        TEXT NOT NULL,
  instance     TEXT NOT NULL,
  arch         TEXT NOT NULL,
  variant      TEXT NOT NULL,
  target       TEXT NOT NULL,
  commit_sha   TEXT NOT NULL,
  median_us    REAL NOT NULL,
  stddev_us    REAL,
  samples      INTEGER,
  tflops       REAL,
  gbps         REAL,
  ratio        REAL,
  result_id    INTEGER NOT NULL,
  passed_count INTEGER NOT NULL DEFAULT 0,
  measured_ms  INTEGER NOT NULL,
  PRIMARY KEY (gpu_model, family, dtype, shape, instance)
) WITHOUT ROWID;
CREATE INDEX best_candidates_any_gpu ON best_candidates(family, dtype, shape);
CREATE INDEX best_candidates_by_target ON best_candidates(target, family, variant);

CREATE TRIGGER results_best_candidate AFTER INSERT ON results
WHEN NEW.status = 'passed' AND NEW.median_us IS NOT NULL
BEGIN
  INSERT INTO best_candidates (gpu_model, family, dtype, shape, instance, arch, variant,
                               target, commit_sha, median_us, stddev_us, samples, tflops,
                               gbps, ratio, result_id, passed_count, measured_ms)
  VALUES (NEW.gpu_model, NEW.family, NEW.dtype, NEW.shape, NEW.instance, NEW.arch,
          NEW.variant, NEW.target, NEW.commit_sha, NEW.median_us, NEW.stddev_us,
          NEW.samples, NEW.tflops, NEW.gbps, NEW.ratio, NEW.id, 0, NEW.created_ms)
  ON CONFLICT (gpu_model, family, dtype, shape, instance) DO UPDATE SET
    (arch, variant, target, commit_sha, median_us, stddev_us, samples, tflops, gbps,
     ratio, result_id, measured_ms) =
    (excluded.arch, excluded.variant, excluded.target, excluded.commit_sha,
     excluded.median_us, excluded.stddev_us, excluded.samples, excluded.tflops,
     excluded.gbps, excluded.ratio, excluded.result_id, excluded.measured_ms)
  WHERE excluded.median_us < best_candidates.median_us;
  UPDATE best_candidates SET passed_count = passed_count + 1
   WHERE gpu_model = NEW.gpu_model AND family = NEW.family AND dtype = NEW.dtype
     AND shape = NEW.shape AND instance = NEW.instance;
END;
