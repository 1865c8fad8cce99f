-- A big, deterministic history for the dashboard benchmark, written straight into a
-- kport database whose schema the coordinator created (run.sh does both). The triggers
-- of migrations 0002 and 0003 keep best_candidates and result_rollup as they would for
-- uploads. __RESULTS__ is replaced by the number of results (run.sh; default 1,000,000).
--
-- Shape of the history: 4 targets, 3 GPU models (two of arch 9.0, one of 8.0), 200
-- commits a minute apart, the 4 families with their variants (two instances each),
-- results spread evenly over commits with ±3% noise, 2% failures, and a 15% slowdown
-- of wgmma_tma on the last 20 commits (so the kernel page has a step to show).
PRAGMA foreign_keys = OFF;
BEGIN;

INSERT OR IGNORE INTO targets (name, arch, features_json, toolkit, first_seen_ms, updated_ms, is_new) VALUES
  ('sm_80', '8.0', '{"mma_sync":true,"cp_async":true}', '13.0', 1700000000000, 1700000000000, 0),
  ('sm_90a', '9.0', '{"mma_sync":true,"cp_async":true,"tma":true,"wgmma":true}', '13.0', 1700000000000, 1700000000000, 0),
  ('sm_100a', '10.0', '{"mma_sync":true,"tma":true,"tcgen05":true}', '13.0', 1700000000000, 1700000000000, 1),
  ('sm_120', '12.0', '{"mma_sync":true,"tma":true}', '13.0', 1700000000000, 1700000000000, 1);

CREATE TEMP TABLE gpu (k INTEGER PRIMARY KEY, model TEXT, arch TEXT, target TEXT, tflops_peak REAL, gbps_peak REAL);
INSERT INTO gpu VALUES (0, 'NVIDIA H200', '9.0', 'sm_90a', 989, 4800), (1, 'NVIDIA H100 80GB HBM3', '9.0', 'sm_90a', 989, 3350),
                       (2, 'NVIDIA A100-SXM4-80GB', '8.0', 'sm_80', 312, 2039);
INSERT OR IGNORE INTO gpu_models (name, arch, first_seen_ms, last_seen_ms) SELECT model, arch, 1700000000000, 1700000000000 FROM gpu;
INSERT OR IGNORE INTO gpu_drivers (gpu_model, driver, first_seen_ms) SELECT model, '580.159.04', 1700000000000 FROM gpu;

CREATE TEMP TABLE fam (family TEXT, variant TEXT, speed REAL);
INSERT INTO fam VALUES ('gemm', 'simt', 0.08), ('gemm', 'mma_sync', 0.55), ('gemm', 'wgmma_tma', 0.85), ('gemm', 'tcgen05', 0.9),
  ('attention', 'simt', 0.05), ('attention', 'mma_sync', 0.45), ('attention', 'wgmma_tma', 0.75),
  ('rmsnorm', 'simt', 0.6), ('rmsnorm', 'vec16', 0.9), ('softmax', 'simt', 0.55), ('softmax', 'vec16', 0.88);
INSERT OR IGNORE INTO kernel_families (name) SELECT DISTINCT family FROM fam;
INSERT OR IGNORE INTO kernel_variants (family, name, features_json) SELECT family, variant, '[]' FROM fam;
INSERT OR IGNORE INTO kernel_instances (name, family, variant, features_json, config_json, updated_ms)
  SELECT family || '.' || variant || '.' || cfg, family, variant, '[]', '{}', 1700000000000
  FROM fam, (SELECT 'a' AS cfg UNION ALL SELECT 'b');

-- work: FLOPs (compute-bound) or bytes moved (memory-bound) of one call.
CREATE TEMP TABLE shp (family TEXT, shape TEXT, dims TEXT, numel REAL, work REAL);
INSERT INTO shp VALUES
  ('gemm', 'm=2048,n=2048,k=2048', '[["m",2048],["n",2048],["k",2048]]', 2048.0*2048*2048, 2*2048.0*2048*2048),
  ('gemm', 'm=4096,n=4096,k=4096', '[["m",4096],["n",4096],["k",4096]]', 4096.0*4096*4096, 2*4096.0*4096*4096),
  ('gemm', 'm=8192,n=8192,k=8192', '[["m",8192],["n",8192],["k",8192]]', 8192.0*8192*8192, 2*8192.0*8192*8192),
  ('gemm', 'm=4096,n=4096,k=512', '[["m",4096],["n",4096],["k",512]]', 4096.0*4096*512, 2*4096.0*4096*512),
  ('gemm', 'm=128,n=8192,k=8192', '[["m",128],["n",8192],["k",8192]]', 128.0*8192*8192, 2*128.0*8192*8192),
  ('gemm', 'm=1000,n=1000,k=1000', '[["m",1000],["n",1000],["k",1000]]', 1e9, 2e9),
  ('attention', 'b=4,h=16,l=4096,d=128,causal=0', '[["b",4],["h",16],["l",4096],["d",128],["causal",0]]', 4*16*4096.0*128, 4*4*16*4096.0*4096*128),
  ('attention', 'b=4,h=16,l=4096,d=128,causal=1', '[["b",4],["h",16],["l",4096],["d",128],["causal",1]]', 0, 2*4*16*4096.0*4096*128),
  ('attention', 'b=4,h=32,l=4096,d=64,causal=0', '[["b",4],["h",32],["l",4096],["d",64],["causal",0]]', 4*32*4096.0*64, 4*4*32*4096.0*4096*64),
  ('attention', 'b=1,h=8,l=1000,d=64,causal=1', '[["b",1],["h",8],["l",1000],["d",64],["causal",1]]', 0, 2*8*1000.0*1000*64),
  ('rmsnorm', 'rows=32768,cols=4096', '[["rows",32768],["cols",4096]]', 32768.0*4096, 2*2*32768.0*4096),
  ('rmsnorm', 'rows=4096,cols=1000', '[["rows",4096],["cols",1000]]', 4096.0*1000, 2*2*4096.0*1000),
  ('rmsnorm', 'rows=1024,cols=4097', '[["rows",1024],["cols",4097]]', 1024.0*4097, 2*2*1024.0*4097),
  ('softmax', 'rows=32768,cols=4096', '[["rows",32768],["cols",4096]]', 32768.0*4096, 2*2*32768.0*4096),
  ('softmax', 'rows=4096,cols=1000', '[["rows",4096],["cols",1000]]', 4096.0*1000, 2*2*4096.0*1000),
  ('softmax', 'rows=1024,cols=4097', '[["rows",1024],["cols",4097]]', 1024.0*4097, 2*2*1024.0*4097);
INSERT OR IGNORE INTO shapes (shape, dims_json, numel) SELECT shape, dims, numel FROM shp;

-- Every configuration a GPU runs: instance x dtype x shape, numbered for the generator.
CREATE TEMP TABLE cfg (k INTEGER PRIMARY KEY, family TEXT, variant TEXT, instance TEXT, dtype TEXT, shape TEXT,
                       work REAL, speed REAL, memory_bound INTEGER);
INSERT INTO cfg (family, variant, instance, dtype, shape, work, speed, memory_bound)
  SELECT f.family, f.variant, f.family || '.' || f.variant || '.' || c.cfg, d.dtype, s.shape, s.work,
         f.speed * CASE c.cfg WHEN 'a' THEN 1.0 ELSE 0.93 END, f.family IN ('rmsnorm', 'softmax')
  FROM fam f, (SELECT 'a' AS cfg UNION ALL SELECT 'b') c, shp s,
       (SELECT 'bf16' AS dtype UNION ALL SELECT 'fp16' UNION ALL SELECT 'fp32') d
  WHERE s.family = f.family AND (d.dtype <> 'fp32' OR f.family <> 'attention')
  ORDER BY 1, 2, 3, 4, 5;

INSERT OR IGNORE INTO repositories (id, name, url, created_ms) VALUES (1, 'kernels', '/srv/git/kernels.git', 1700000000000);
CREATE TEMP TABLE cm (k INTEGER PRIMARY KEY, sha TEXT);
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 199)
INSERT INTO cm (k, sha) SELECT i, printf('%010x%030x', 12648430 + i, i * 2654435761) FROM n;
INSERT OR IGNORE INTO commits (sha, repo_id, parent_sha, message, author, time_ms, created_ms)
  SELECT c.sha, 1, p.sha, 'change ' || c.k || ': retune tiles', 'dev <dev@example.com>',
         1764000000000 + c.k * 60000, 1764000000000 + c.k * 60000
  FROM cm c LEFT JOIN cm p ON p.k = c.k - 1;

-- Build records: every variant for every target and commit; features decide applicability.
INSERT INTO build_records (commit_sha, target, family, variant, status, message, registers, spill_stores_bytes,
                           spill_loads_bytes, shared_mem_bytes, created_ms)
  SELECT c.sha, t.name, f.family, f.variant,
         CASE WHEN f.variant = 'wgmma_tma' AND t.name <> 'sm_90a' THEN 'not_applicable'
              WHEN f.variant = 'tcgen05' AND t.name <> 'sm_100a' THEN 'not_applicable'
              WHEN t.name = 'sm_120' AND f.variant = 'mma_sync' AND c.k < 150 THEN 'compile_error'
              ELSE 'ok' END,
         CASE WHEN t.name = 'sm_120' AND f.variant = 'mma_sync' AND c.k < 150 THEN 'error: no ldmatrix for sm_120 here' ELSE '' END,
         128, CASE WHEN f.variant = 'tcgen05' THEN 64 ELSE 0 END, 0, 98304, 1764000000000 + c.k * 60000
  FROM cm c, (SELECT name FROM targets) t, fam f;

-- The results: row i belongs to commit i*200/N; each block of rows runs every
-- configuration once on one GPU, blocks rotating over the GPUs; the noise comes from a
-- multiplicative hash of i, uniform in [-3%, +3%].
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < __RESULTS__ - 1),
rows AS (
  SELECT n.i, cm.sha, cm.k AS ck, gpu.model, gpu.arch, gpu.target, gpu.tflops_peak, gpu.gbps_peak, cfg.*,
         ((n.i * 2654435761) % 1000) / 1000.0 AS u, (n.i * 40503) % 50 = 0 AS failed
  FROM n
  JOIN cm ON cm.k = n.i * 200 / __RESULTS__
  JOIN gpu ON gpu.k = (n.i / (SELECT count(*) FROM cfg)) % 3
  JOIN cfg ON cfg.k = 1 + (n.i * 104729) % (SELECT count(*) FROM cfg)
),
timed AS (
  SELECT *, work / ((CASE WHEN memory_bound THEN gbps_peak * 1e3 ELSE tflops_peak * 1e6 END)
                    * speed * CASE WHEN dtype = 'fp32' THEN 0.5 ELSE 1 END)
            * (0.97 + 0.06 * u) * CASE WHEN variant = 'wgmma_tma' AND ck >= 180 THEN 1.15 ELSE 1 END AS us,
         work / ((CASE WHEN memory_bound THEN gbps_peak * 1e3 ELSE tflops_peak * 1e6 END) * 0.8
                 * CASE WHEN dtype = 'fp32' THEN 0.5 ELSE 1 END) AS base_us
  FROM rows
)
INSERT INTO results (commit_sha, target, family, variant, instance, dtype, shape, toolkit, gpu_model, gpu_uuid, arch,
                     driver, status, message, max_abs_err, normwise_rel_err, nan_inf_count, tolerance, seed, median_us,
                     stddev_us, samples, tflops, gbps, baseline_name, baseline_median_us, ratio, created_ms)
SELECT sha, target, family, variant, instance, dtype, shape, '13.0', model, 'GPU-' || (i % 8), arch, '580.159.04',
       CASE WHEN failed THEN 'failed' ELSE 'passed' END,
       CASE WHEN failed THEN 'normwise error 0.2 above tolerance 0.02' ELSE '' END,
       CASE WHEN failed THEN 0.5 ELSE 0.002 END, CASE WHEN failed THEN 0.2 ELSE 0.001 END, 0, 0.02, i,
       CASE WHEN failed THEN NULL ELSE us END, CASE WHEN failed THEN NULL ELSE us * 0.004 END, 50,
       CASE WHEN failed OR memory_bound THEN NULL ELSE work / (us * 1e6) END,
       CASE WHEN failed OR NOT memory_bound THEN NULL ELSE work / (us * 1e3) END,
       CASE WHEN memory_bound THEN 'device_copy' ELSE 'cublas' END, base_us,
       CASE WHEN failed THEN NULL ELSE base_us / us END, 1764000000000 + ck * 60000 + 30000
FROM timed;

COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
