-- 0021: the environment a library's harness runs with (its kport.json `env`, placeholders
-- unexpanded), recorded with each build record of its build; the GPU runner applies it to
-- the harness processes it starts.
ALTER TABLE build_records ADD COLUMN harness_env_json TEXT NOT NULL DEFAULT '{}';
