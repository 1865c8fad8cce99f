-- 0014: a result's metrics beyond its columns, by name, as one JSON object
-- ({"clock_mhz_min": 1755, ...}; kport::api::k_result_metrics names them). A metric the
-- harness reports is added there, with no migration of its own: the store keeps what it
-- is given and never queries inside it. '{}' for results stored before.
ALTER TABLE results ADD COLUMN metrics_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metrics_json));
