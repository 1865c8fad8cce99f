-- 0020: several libraries side by side. A library is the repository its code comes
-- from (pipelines.repo, else the commit's repository): results, build records and kernel
-- instances carry it, so two libraries' evidence never merges, even where they name an
-- instance alike; the best-kernel rows are kept per repository too.
--
-- repo is '' only for rows with neither a job nor a known commit (an operator's upload).

ALTER TABLE results ADD COLUMN repo TEXT NOT NULL DEFAULT '';
ALTER TABLE build_records ADD COLUMN repo TEXT NOT NULL DEFAULT '';

UPDATE results SET repo = coalesce(
  (SELECT nullif(p.repo, '') FROM jobs j JOIN pipelines p ON p.id = j.pipeline_id WHERE j.id = results.job_id),
  (SELECT r.name FROM commits c JOIN repositories r ON r.id = c.repo_id WHERE c.sha = results.commit_sha), '');
UPDATE build_records SET repo = coalesce(
  (SELECT nullif(p.repo, '') FROM jobs j JOIN pipelines p ON p.id = j.pipeline_id WHERE j.id = build_records.job_id),
  (SELECT r.name FROM commits c JOIN repositories r ON r.id = c.repo_id WHERE c.sha = build_records.commit_sha), '');
CREATE INDEX build_records_by_repo ON build_records(repo, target, id);

-- An instance is named within its library: (repo, name).
CREATE TABLE kernel_instances_0020 (
  repo          TEXT NOT NULL DEFAULT '',
  name          TEXT NOT NULL,
  family        TEXT NOT NULL,
  variant       TEXT NOT NULL,
  features_json TEXT NOT NULL DEFAULT '[]',
  config_json   TEXT NOT NULL DEFAULT '{}',
  updated_ms    INTEGER NOT NULL,
  dtypes_json   TEXT,
  PRIMARY KEY (repo, name),
  FOREIGN KEY (family, variant) REFERENCES kernel_variants(family, name)
);
INSERT INTO kernel_instances_0020 (repo, name, family, variant, features_json, config_json, updated_ms, dtypes_json)
SELECT '', name, family, variant, features_json, config_json, updated_ms, dtypes_json FROM kernel_instances;
DROP TABLE kernel_instances;
ALTER TABLE kernel_instances_0020 RENAME TO kernel_instances;
CREATE INDEX kernel_instances_by_family ON kernel_instances(family, variant);

-- best_candidates as 0008 keeps it, with the repository in its key.
DROP TRIGGER results_best_candidate;
DROP TRIGGER commits_best_candidate_order;
DROP TABLE best_candidates;

CREATE TABLE best_candidates (
  gpu_model          TEXT NOT NULL,
  family             TEXT NOT NULL,
  dtype              TEXT NOT NULL,
  shape              TEXT NOT NULL,
  instance           TEXT NOT NULL,
  repo               TEXT NOT NULL,
  arch               TEXT NOT NULL,
  variant            TEXT NOT NULL,
  target             TEXT NOT NULL,
  commit_sha         TEXT NOT NULL,
  commit_ms          INTEGER NOT NULL,
  status             TEXT NOT NULL,
  driver             TEXT NOT NULL DEFAULT '',
  median_us          REAL,
  stddev_us          REAL,
  samples            INTEGER,
  tflops             REAL,
  gbps               REAL,
  ratio              REAL,
  baseline_median_us REAL,
  unstable           INTEGER NOT NULL DEFAULT 0,
  result_id          INTEGER NOT NULL,
  passed_count       INTEGER NOT NULL DEFAULT 0,
  results_count      INTEGER NOT NULL DEFAULT 0,
  measured_ms        INTEGER NOT NULL,
  PRIMARY KEY (gpu_model, family, dtype, shape, instance, repo)
) WITHOUT ROWID;
CREATE INDEX best_candidates_any_gpu ON best_candidates(family, dtype, shape);
CREATE INDEX best_candidates_by_target ON best_candidates(target, family, variant);

INSERT INTO best_candidates
SELECT gpu_model, family, dtype, shape, instance, repo, arch, variant, target, commit_sha, commit_ms, status,
       driver, median_us, stddev_us, samples, tflops, gbps, ratio, baseline_median_us, unstable, id,
       passed_n, results_n, created_ms
FROM (
  SELECT r.gpu_model, r.family, r.dtype, r.shape, r.instance, r.repo, r.arch, r.variant, r.target, r.commit_sha,
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
         row_number() OVER (PARTITION BY r.gpu_model, r.family, r.dtype, r.shape, r.instance, r.repo
                            ORDER BY coalesce(nullif(c.time_ms, 0), r.created_ms) DESC, r.id DESC) AS rn
  FROM results r LEFT JOIN commits c ON c.sha = r.commit_sha
  WINDOW same_commit AS (PARTITION BY r.gpu_model, r.family, r.dtype, r.shape, r.instance, r.repo, r.commit_sha)
)
WHERE rn = 1;

CREATE TRIGGER results_best_candidate AFTER INSERT ON results
BEGIN
  INSERT INTO best_candidates (gpu_model, family, dtype, shape, instance, repo, arch, variant, target, commit_sha,
                               commit_ms, status, driver, median_us, stddev_us, samples, tflops, gbps, ratio,
                               baseline_median_us, unstable, result_id, passed_count, results_count,
                               measured_ms)
  SELECT NEW.gpu_model, NEW.family, NEW.dtype, NEW.shape, NEW.instance, NEW.repo, NEW.arch, NEW.variant, NEW.target,
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
  ON CONFLICT (gpu_model, family, dtype, shape, instance, repo) DO UPDATE SET
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

CREATE TRIGGER commits_best_candidate_order AFTER INSERT ON commits
WHEN NEW.time_ms > 0 AND EXISTS (SELECT 1 FROM results WHERE commit_sha = NEW.sha)
BEGIN
  DELETE FROM best_candidates
   WHERE (gpu_model, family, dtype, shape, instance, repo) IN
         (SELECT gpu_model, family, dtype, shape, instance, repo FROM results WHERE commit_sha = NEW.sha);
  INSERT INTO best_candidates
  SELECT gpu_model, family, dtype, shape, instance, repo, arch, variant, target, commit_sha, commit_ms, status,
         driver, median_us, stddev_us, samples, tflops, gbps, ratio, baseline_median_us, unstable, id,
         passed_n, results_n, created_ms
  FROM (
    SELECT r.gpu_model, r.family, r.dtype, r.shape, r.instance, r.repo, r.arch, r.variant, r.target, r.commit_sha,
           coalesce(nullif(c.time_ms, 0), r.created_ms) AS commit_ms, r.status, r.driver,
           CASE WHEN r.status = 'passed' THEN r.median_us END AS median_us,
           CASE WHEN r.status = 'passed' THEN r.stddev_us END AS stddev_us,
           CASE WHEN r.status = 'passed' THEN r.samples END AS samples,
           CASE WHEN r.status = 'passed' THEN r.tflops END AS tflops,
           CASE WHEN r.status = 'passed' THEN r.gbps END AS gbps,
           CASE WHEN r.status = 'passed' THEN r.ratio END AS ratio,
           CASE WHEN r.status = 'passed' THEN r.baseline_median_us END AS baseline_median_us,
           r.unstable, r.id, r.created_ms,
           sum(r.status = 'passed') OVER (PARTITION BY r.gpu_model, r.family, r.dtype, r.shape, r.instance, r.repo,
                                                       r.commit_sha) AS passed_n,
           count(*) OVER (PARTITION BY r.gpu_model, r.family, r.dtype, r.shape, r.instance, r.repo,
                          r.commit_sha) AS results_n,
           row_number() OVER (PARTITION BY r.gpu_model, r.family, r.dtype, r.shape, r.instance, r.repo
                              ORDER BY coalesce(nullif(c.time_ms, 0), r.created_ms) DESC, r.id DESC) AS rn
    FROM (SELECT DISTINCT gpu_model, family, dtype, shape, instance, repo FROM results WHERE commit_sha = NEW.sha) k
    JOIN results r ON r.gpu_model = k.gpu_model AND r.family = k.family AND r.dtype = k.dtype
                  AND r.shape = k.shape AND r.instance = k.instance AND r.repo = k.repo
    LEFT JOIN commits c ON c.sha = r.commit_sha
  )
  WHERE rn = 1;
END;

-- A commit recorded after rows that name it and no job gives them their library: their
-- repo was '' (no pipeline, no commit yet). Its results' best_candidates keys move with
-- them, recomputed from every result of those keys of that library or of none.
CREATE TRIGGER commits_build_record_repo AFTER INSERT ON commits
WHEN EXISTS (SELECT 1 FROM build_records WHERE commit_sha = NEW.sha AND repo = '')
BEGIN
  UPDATE build_records SET repo = coalesce((SELECT name FROM repositories WHERE id = NEW.repo_id), '')
   WHERE commit_sha = NEW.sha AND repo = '';
END;

CREATE TRIGGER commits_result_repo AFTER INSERT ON commits
WHEN EXISTS (SELECT 1 FROM results WHERE commit_sha = NEW.sha AND repo = '')
  AND EXISTS (SELECT 1 FROM repositories WHERE id = NEW.repo_id)
BEGIN
  DELETE FROM best_candidates
   WHERE (gpu_model, family, dtype, shape, instance) IN
         (SELECT gpu_model, family, dtype, shape, instance FROM results WHERE commit_sha = NEW.sha AND repo = '')
     AND repo IN ('', (SELECT name FROM repositories WHERE id = NEW.repo_id));
  UPDATE results SET repo = (SELECT name FROM repositories WHERE id = NEW.repo_id)
   WHERE commit_sha = NEW.sha AND repo = '';
  INSERT INTO best_candidates
  SELECT gpu_model, family, dtype, shape, instance, repo, arch, variant, target, commit_sha, commit_ms, status,
         driver, median_us, stddev_us, samples, tflops, gbps, ratio, baseline_median_us, unstable, id,
         passed_n, results_n, created_ms
  FROM (
    SELECT r.gpu_model, r.family, r.dtype, r.shape, r.instance, r.repo, r.arch, r.variant, r.target, r.commit_sha,
           coalesce(nullif(c.time_ms, 0), r.created_ms) AS commit_ms, r.status, r.driver,
           CASE WHEN r.status = 'passed' THEN r.median_us END AS median_us,
           CASE WHEN r.status = 'passed' THEN r.stddev_us END AS stddev_us,
           CASE WHEN r.status = 'passed' THEN r.samples END AS samples,
           CASE WHEN r.status = 'passed' THEN r.tflops END AS tflops,
           CASE WHEN r.status = 'passed' THEN r.gbps END AS gbps,
           CASE WHEN r.status = 'passed' THEN r.ratio END AS ratio,
           CASE WHEN r.status = 'passed' THEN r.baseline_median_us END AS baseline_median_us,
           r.unstable, r.id, r.created_ms,
           sum(r.status = 'passed') OVER (PARTITION BY r.gpu_model, r.family, r.dtype, r.shape, r.instance, r.repo,
                                                       r.commit_sha) AS passed_n,
           count(*) OVER (PARTITION BY r.gpu_model, r.family, r.dtype, r.shape, r.instance, r.repo,
                          r.commit_sha) AS results_n,
           row_number() OVER (PARTITION BY r.gpu_model, r.family, r.dtype, r.shape, r.instance, r.repo
                              ORDER BY coalesce(nullif(c.time_ms, 0), r.created_ms) DESC, r.id DESC) AS rn
    FROM (SELECT DISTINCT gpu_model, family, dtype, shape, instance FROM results WHERE commit_sha = NEW.sha) k
    JOIN results r ON r.gpu_model = k.gpu_model AND r.family = k.family AND r.dtype = k.dtype
                  AND r.shape = k.shape AND r.instance = k.instance
                  AND r.repo IN ('', (SELECT name FROM repositories WHERE id = NEW.repo_id))
    LEFT JOIN commits c ON c.sha = r.commit_sha
  )
  WHERE rn = 1
  ON CONFLICT (gpu_model, family, dtype, shape, instance, repo) DO NOTHING;
END;
