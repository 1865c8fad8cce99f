-- 0025: unmeasured asks per library. /api/v1/best answers a question from one library's
-- evidence, so an ask is counted for that library (repository): the most asked shapes
-- and the measure requests they lead to are then of the library that would measure
-- them. Asks counted before are of no library ('').
CREATE TABLE best_asks_0025 (
  gpu_model TEXT NOT NULL,
  family    TEXT NOT NULL,
  dtype     TEXT NOT NULL,
  shape     TEXT NOT NULL,
  repo      TEXT NOT NULL DEFAULT '',
  asks      INTEGER NOT NULL CHECK (asks >= 0),
  first_ms  INTEGER NOT NULL,
  last_ms   INTEGER NOT NULL,
  PRIMARY KEY (gpu_model, family, dtype, shape, repo)
);
INSERT INTO best_asks_0025 (gpu_model, family, dtype, shape, repo, asks, first_ms, last_ms)
SELECT gpu_model, family, dtype, shape, '', asks, first_ms, last_ms FROM best_asks;
DROP TABLE best_asks;
ALTER TABLE best_asks_0025 RENAME TO best_asks;
CREATE INDEX best_asks_by_last ON best_asks(last_ms);
