-- 0003: the dashboard's rollup of results, and an index for one kernel's history.
--
-- Results are immutable, so per (target, family, variant, commit, GPU model) the counts
-- only grow and the maxima only rise: a trigger keeps them, and the dashboard reads a
-- few thousand rollup rows instead of aggregating a million results per page.

CREATE TABLE result_rollup (
  target     TEXT NOT NULL,
  family     TEXT NOT NULL,
  variant    TEXT NOT NULL,
  commit_sha TEXT NOT NULL,
  gpu_model  TEXT NOT NULL,
  arch       TEXT NOT NULL,
  passed     INTEGER NOT NULL DEFAULT 0,
  failed     INTEGER NOT NULL DEFAULT 0,   -- any status but passed
  measured   INTEGER NOT NULL DEFAULT 0,   -- passed with a median time
  max_ratio  REAL,                         -- of passing results: baseline / kernel
  max_tflops REAL,
  max_gbps   REAL,
  pass_id    INTEGER,                      -- latest passing result
  fail_id    INTEGER,                      -- latest result that did not pass
  first_ms   INTEGER NOT NULL,
  last_ms    INTEGER NOT NULL,
  PRIMARY KEY (target, family, variant, commit_sha, gpu_model, arch)
) WITHOUT ROWID;

INSERT INTO result_rollup (target, family, variant, commit_sha, gpu_model, arch, passed, failed, measured,
                           max_ratio, max_tflops, max_gbps, pass_id, fail_id, first_ms, last_ms)
SELECT target, family, variant, commit_sha, gpu_model, arch,
       sum(status = 'passed'), sum(status <> 'passed'), sum(status = 'passed' AND median_us IS NOT NULL),
       max(CASE WHEN status = 'passed' THEN ratio END), max(CASE WHEN status = 'passed' THEN tflops END),
       max(CASE WHEN status = 'passed' THEN gbps END), max(CASE WHEN status = 'passed' THEN id END),
       max(CASE WHEN status <> 'passed' THEN id END), min(created_ms), max(created_ms)
  FROM results GROUP BY target, family, variant, commit_sha, gpu_model, arch;

-- max(a, b) is NULL when either is: coalesce each side with the other first.
CREATE TRIGGER results_rollup AFTER INSERT ON results
BEGIN
  INSERT INTO result_rollup (target, family, variant, commit_sha, gpu_model, arch, passed, failed, measured,
                             max_ratio, max_tflops, max_gbps, pass_id, fail_id, first_ms, last_ms)
  VALUES (NEW.target, NEW.family, NEW.variant, NEW.commit_sha, NEW.gpu_model, NEW.arch,
          NEW.status = 'passed', NEW.status <> 'passed', NEW.status = 'passed' AND NEW.median_us IS NOT NULL,
          CASE WHEN NEW.status = 'passed' THEN NEW.ratio END, CASE WHEN NEW.status = 'passed' THEN NEW.tflops END,
          CASE WHEN NEW.status = 'passed' THEN NEW.gbps END, CASE WHEN NEW.status = 'passed' THEN NEW.id END,
          CASE WHEN NEW.status <> 'passed' THEN NEW.id END, NEW.created_ms, NEW.created_ms)
  ON CONFLICT (target, family, variant, commit_sha, gpu_model, arch) DO UPDATE SET
    passed = passed + excluded.passed,
    failed = failed + excluded.failed,
    measured = measured + excluded.measured,
    max_ratio = max(coalesce(max_ratio, excluded.max_ratio), coalesce(excluded.max_ratio, max_ratio)),
    max_tflops = max(coalesce(max_tflops, excluded.max_tflops), coalesce(excluded.max_tflops, max_tflops)),
    max_gbps = max(coalesce(max_gbps, excluded.max_gbps), coalesce(excluded.max_gbps, max_gbps)),
    pass_id = coalesce(excluded.pass_id, pass_id),
    fail_id = coalesce(excluded.fail_id, fail_id),
    last_ms = max(last_ms, excluded.last_ms);
END;

-- One kernel configuration's history across commits and GPU models (the kernel page).
CREATE INDEX results_by_instance ON results(instance, dtype, shape, gpu_model);
