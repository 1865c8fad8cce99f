-- 0008: best_candidates holds each instance's *current* figure instead of its fastest
-- ever. Per (gpu_model, family, dtype, shape, instance) the row is the latest result
-- of the newest commit measured on that GPU model: newest by the commit's time where
-- the commits table knows it (time_ms > 0), else by the result's arrival; within one
-- commit the latest result wins, so a re-measure replaces the first figure. The order
-- is argmax(commit_ms, id), the rule porting::current_figures applies in memory.
-- Failed, crashed, timed-out and unsupported results are kept as the row too (with no
-- figures), so an instance that broke on the newest commit drops out of the ranking
-- instead of standing on its old passing run. Readers that want figures filter on
-- median_us IS NOT NULL, which only a passing, timed result sets.

DROP TRIGGER results_best_candidate;
DROP TABLE best_candidates;

CREATE TABLE best_candidates (
  gpu_model          TEXT NOT NULL,
  family             TEXT NOT NULL,
  dtype              TEXT NOT NULL,
  shape              TEXT NOT NULL,
  instance           TEXT NOT NULL,
  arch               TEXT NOT NULL,
  variant            TEXT NOT NULL,
  target             TEXT NOT NULL,
  commit_sha         TEXT NOT NULL,
  commit_ms          INTEGER NOT NULL,  -- the commit's time, else the result's arrival
  status             TEXT NOT NULL,     -- of result_id
  driver             TEXT NOT NULL DEFAULT '',
  median_us          REAL,              -- set only for a passing, timed result
  stddev_us          REAL,
  samples            INTEGER,
  tflops             REAL,
  gbps               REAL,
  ratio              REAL,
  baseline_median_us REAL,
  unstable           INTEGER NOT NULL DEFAULT 0,
  result_id          INTEGER NOT NULL,
  passed_count       INTEGER NOT NULL DEFAULT 0,  -- passing results of commit_sha behind the row
  results_count      INTEGER NOT NULL DEFAULT 0,  -- all results of commit_sha behind the row
  measured_ms        INTEGER NOT NULL,            -- created_ms of result_id
  PRIMARY KEY (gpu_model, family, dtype, shape, instance)
) WITHOUT ROWID;
CREATE INDEX best_candidates_any_gpu ON best_candidates(family, dtype, shape);
CREATE INDEX best_candidates_by_target ON best_candidates(target, family, variant);

-- Rebuild from every result. The window orders each key's results by (commit_ms, id)
-- and counts the results of the winning row's commit.
INSERT INTO best_candidates
SELECT gpu_model, family, dtype, shape, instance, arch, variant, target, commit_sha, commit_ms, status,
       driver, median_us, stddev_us, samples, tflops, gbps, ratio, baseline_median_us, unstable, id,
       passed_n, results_n, created_ms
FROM (
  SELECT r.gpu_model, r.family, r.dtype, r.shape, r.instance, r.arch, r.variant, r.target, r.commit_sha,
         coalesce(nullif(c.time_ms, 0), r.created_ms) AS commit_ms, r.status, r.driver,
         CASE WHEN r.status = 'passed' THEN r.median_us END AS median_us,
         CASE WHEN r.status = 'passed' THEN r.stddev_us END AS stddev_us,
         CASE WHEN r.status = 'passed' THEN r.samples END AS samples,
         CASE WHEN r.status = 'passed' THEN r.tflops END AS tflops,
         CASE WHEN r.status = 'passed' THEN r.gbps END AS gbps,
         CASE WHEN r.status = 'passed' THEN r.ratio END AS ratio,
         CASE WHEN r.status = 'passed' THEN r.baseline_median_us END AS baseline_median_us,
         r.unstable, r.id, r.created_ms,
         sum(r.status = 'passed') OVER same_commit AS passed_n,
         count(*) OVER same_commit AS results_n,
         row_number() OVER (PARTITION BY r.gpu_model, r.family, r.dtype, r.shape, r.instance
                            ORDER BY coalesce(nullif(c.time_ms, 0), r.created_ms) DESC, r.id DESC) AS rn
  FROM results r LEFT JOIN commits c ON c.sha = r.commit_sha
  WINDOW same_commit AS (PARTITION BY r.gpu_model, r.family, r.dtype, r.shape, r.instance, r.commit_sha)
)
WHERE rn = 1;

-- A new result is the newest figure of its key unless the row holds a newer commit.
-- Its id is the largest, so (commit_ms, id) ranks it first exactly when its commit_ms
-- is not smaller than the row's.
CREATE TRIGGER results_best_candidate AFTER INSERT ON results
BEGIN
  INSERT INTO best_candidates (gpu_model, family, dtype, shape, instance, arch, variant, target, commit_sha,
                               commit_ms, status, driver, median_us, stddev_us, samples, tflops, gbps, ratio,
                               baseline_median_us, unstable, result_id, passed_count, results_count,
                               measured_ms)
  SELECT NEW.gpu_model, NEW.family, NEW.dtype, NEW.shape, NEW.instance, NEW.arch, NEW.variant, NEW.target,
         NEW.commit_sha,
         coalesce((SELECT nullif(time_ms, 0) FROM commits WHERE sha = NEW.commit_sha), NEW.created_ms),
         NEW.status, NEW.driver,
         CASE WHEN NEW.status = 'passed' THEN NEW.median_us END,
         CASE WHEN NEW.status = 'passed' THEN NEW.stddev_us END,
         CASE WHEN NEW.status = 'passed' THEN NEW.samples END,
         CASE WHEN NEW.status = 'passed' THEN NEW.tflops END,
         CASE WHEN NEW.status = 'passed' THEN NEW.gbps END,
         CASE WHEN NEW.status = 'passed' THEN NEW.ratio END,
         CASE WHEN NEW.status = 'passed' THEN NEW.baseline_median_us END,
         NEW.unstable, NEW.id, NEW.status = 'passed', 1, NEW.created_ms
  WHERE true
  ON CONFLICT (gpu_model, family, dtype, shape, instance) DO UPDATE SET
    (arch, variant, target, commit_sha, commit_ms, status, driver, median_us, stddev_us, samples, tflops, gbps,
     ratio, baseline_median_us, unstable, result_id, measured_ms) =
    (excluded.arch, excluded.variant, excluded.target, excluded.commit_sha, excluded.commit_ms, excluded.status,
     excluded.driver, excluded.median_us, excluded.stddev_us, excluded.samples, excluded.tflops, excluded.gbps,
     excluded.ratio, excluded.baseline_median_us, excluded.unstable, excluded.result_id, excluded.measured_ms),
    passed_count = CASE WHEN excluded.commit_sha = best_candidates.commit_sha
                        THEN best_candidates.passed_count + excluded.passed_count ELSE excluded.passed_count END,
    results_count = CASE WHEN excluded.commit_sha = best_candidates.commit_sha
                         THEN best_candidates.results_count + 1 ELSE 1 END
  WHERE excluded.commit_ms >= best_candidates.commit_ms;
END;

-- A commit recorded after its results changes their order: recompute the keys it touches
-- (through results_by_commit, then results_by_gpu per key).
CREATE TRIGGER commits_best_candidate_order AFTER INSERT ON commits
WHEN NEW.time_ms > 0 AND EXISTS (SELECT 1 FROM results WHERE commit_sha = NEW.sha)
BEGIN
  DELETE FROM best_candidates
   WHERE (gpu_model, family, dtype, shape, instance) IN
         (SELECT gpu_model, family, dtype, shape, instance FROM results WHERE commit_sha = NEW.sha);
  INSERT INTO best_candidates
  SELECT gpu_model, family, dtype, shape, instance, arch, variant, target, commit_sha, commit_ms, status,
         driver, median_us, stddev_us, samples, tflops, gbps, ratio, baseline_median_us, unstable, id,
         passed_n, results_n, created_ms
  FROM (
    SELECT r.gpu_model, r.family, r.dtype, r.shape, r.instance, r.arch, r.variant, r.target, r.commit_sha,
           coalesce(nullif(c.time_ms, 0), r.created_ms) AS commit_ms, r.status, r.driver,
           CASE WHEN r.status = 'passed' THEN r.median_us END AS median_us,
           CASE WHEN r.status = 'passed' THEN r.stddev_us END AS stddev_us,
           CASE WHEN r.status = 'passed' THEN r.samples END AS samples,
           CASE WHEN r.status = 'passed' THEN r.tflops END AS tflops,
           CASE WHEN r.status = 'passed' THEN r.gbps END AS gbps,
           CASE WHEN r.status = 'passed' THEN r.ratio END AS ratio,
           CASE WHEN r.status = 'passed' THEN r.baseline_median_us END AS baseline_median_us,
           r.unstable, r.id, r.created_ms,
           sum(r.status = 'passed') OVER (PARTITION BY r.gpu_model, r.family, r.dtype, r.shape, r.instance,
                                                       r.commit_sha) AS passed_n,
           count(*) OVER (PARTITION BY r.gpu_model, r.family, r.dtype, r.shape, r.instance,
                          r.commit_sha) AS results_n,
           row_number() OVER (PARTITION BY r.gpu_model, r.family, r.dtype, r.shape, r.instance
                              ORDER BY coalesce(nullif(c.time_ms, 0), r.created_ms) DESC, r.id DESC) AS rn
    FROM (SELECT DISTINCT gpu_model, family, dtype, shape, instance FROM results WHERE commit_sha = NEW.sha) k
    JOIN results r ON r.gpu_model = k.gpu_model AND r.family = k.family AND r.dtype = k.dtype
                  AND r.shape = k.shape AND r.instance = k.instance
    LEFT JOIN commits c ON c.sha = r.commit_sha
  )
  WHERE rn = 1;
END;

-- Which drivers a GPU model's results of a family and dtype came from, so an answer can
-- say which driver its evidence used and that others exist without scanning results.
CREATE TABLE result_drivers (
  gpu_model TEXT NOT NULL,
  family    TEXT NOT NULL,
  dtype     TEXT NOT NULL,
  driver    TEXT NOT NULL,
  results   INTEGER NOT NULL,
  last_ms   INTEGER NOT NULL,
  PRIMARY KEY (gpu_model, family, dtype, driver)
) WITHOUT ROWID;
INSERT INTO result_drivers
SELECT gpu_model, family, dtype, driver, count(*), max(created_ms) FROM results
 GROUP BY gpu_model, family, dtype, driver;
CREATE TRIGGER results_driver AFTER INSERT ON results
BEGIN
  INSERT INTO result_drivers (gpu_model, family, dtype, driver, results, last_ms)
  VALUES (NEW.gpu_model, NEW.family, NEW.dtype, NEW.driver, 1, NEW.created_ms)
  ON CONFLICT (gpu_model, family, dtype, driver) DO UPDATE SET
    results = results + 1, last_ms = max(last_ms, excluded.last_ms);
END;

-- The dtypes each instance runs, as the harness's `list` reports them (["bf16","fp16"]);
-- NULL where the publisher did not say.
ALTER TABLE kernel_instances ADD COLUMN dtypes_json TEXT;
