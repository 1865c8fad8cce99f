-- 0023: measure requests per library. A request measures one library's instances on that
-- library's build, so the repository is part of its key: two libraries asking for the
-- same GPU model, op, dtype and shape are two requests, each with its own check job.
-- Requests made before are of no library ('').
ALTER TABLE best_requests ADD COLUMN repo TEXT NOT NULL DEFAULT '';
DROP INDEX best_requests_by_key;
CREATE INDEX best_requests_by_key ON best_requests(gpu_model, family, dtype, shape, repo, id);
CREATE INDEX best_requests_by_repo ON best_requests(repo, id);
