-- 0013: why a job exists, as a column the store's queries read instead of searching the
-- payload's text: check (a commit's build or check), revalidate (the fleet changed),
-- remeasure (a verdict measures a suspected slowdown again), measure_request (a user
-- asked for a shape). The coordinator sets it from the payload's typed purpose
-- (kport::api::JobPayload); rows from before are read from their payload's top-level key,
-- as kport::api::parse_job_payload reads it (a payload naming two purposes was never
-- written; best_request wins over revalidate over remeasure here).
ALTER TABLE jobs ADD COLUMN purpose TEXT NOT NULL DEFAULT 'check'
  CHECK (purpose IN ('check', 'revalidate', 'remeasure', 'measure_request'));
UPDATE jobs SET purpose = CASE
    WHEN json_type(payload_json, '$.best_request') = 'object' THEN 'measure_request'
    WHEN json_type(payload_json, '$.revalidate') = 'object' THEN 'revalidate'
    WHEN json_type(payload_json, '$.remeasure') = 'true' THEN 'remeasure'
    ELSE 'check' END
  WHERE json_valid(payload_json) AND json_type(payload_json) = 'object';
