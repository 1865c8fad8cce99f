-- 0004: indexes that serve keyset pages of results (newest first) without sorting.
--
-- A page by GPU model, family and dtype walks results_by_gpu_recent in id order and
-- stops after one page; with only results_by_gpu (..., shape) SQLite sorted every match
-- first (85 ms a page at a million results). With the shape too, results_by_gpu
-- (whose rowid suffix is the id) already gives that order. A page by target walks
-- results_by_target_recent.
CREATE INDEX results_by_gpu_recent ON results(gpu_model, family, dtype, id);
CREATE INDEX results_by_target_recent ON results(target, id);
