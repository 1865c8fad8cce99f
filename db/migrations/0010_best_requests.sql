-- 0010: requests to measure a shape /api/v1/best answered without a measurement of it,
-- and how often such shapes were asked.

-- One row per measure request: the check job it queued, pinned to the GPU model. A
-- request is open while its job is; asking again for an open one counts (requests) but
-- queues nothing. shape is canonical (keys sorted), as /api/v1/best echoes it.
CREATE TABLE best_requests (
  id         INTEGER PRIMARY KEY,
  gpu_model  TEXT NOT NULL,
  family     TEXT NOT NULL,
  dtype      TEXT NOT NULL,
  shape      TEXT NOT NULL,
  job_id     INTEGER NOT NULL REFERENCES jobs(id),
  requests   INTEGER NOT NULL DEFAULT 1 CHECK (requests >= 1),
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);
CREATE INDEX best_requests_by_key ON best_requests(gpu_model, family, dtype, shape, id);

-- Questions /api/v1/best answered without a measured exact shape, counted in memory and
-- written in batches.
CREATE TABLE best_asks (
  gpu_model TEXT NOT NULL,
  family    TEXT NOT NULL,
  dtype     TEXT NOT NULL,
  shape     TEXT NOT NULL,
  asks      INTEGER NOT NULL CHECK (asks >= 0),
  first_ms  INTEGER NOT NULL,
  last_ms   INTEGER NOT NULL,
  PRIMARY KEY (gpu_model, family, dtype, shape)
);
CREATE INDEX best_asks_by_last ON best_asks(last_ms);
