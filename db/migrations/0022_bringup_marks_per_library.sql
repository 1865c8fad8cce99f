-- 0022: bring-up notices per library. A target's stage counts as last told to the
-- notification webhooks are kept per library (repository), as its board is: two
-- libraries building one target each get their own milestones and regressions, and one's
-- counts are never compared with the other's. Existing marks are of no library ('').
CREATE TABLE bringup_marks_0022 (
  target          TEXT NOT NULL,
  repo            TEXT NOT NULL DEFAULT '',
  commit_sha      TEXT,
  counts_json     TEXT NOT NULL,
  milestones_json TEXT NOT NULL DEFAULT '[]',
  updated_ms      INTEGER NOT NULL,
  PRIMARY KEY (target, repo)
);
INSERT INTO bringup_marks_0022 (target, repo, commit_sha, counts_json, milestones_json, updated_ms)
SELECT target, '', commit_sha, counts_json, milestones_json, updated_ms FROM bringup_marks;
DROP TABLE bringup_marks;
ALTER TABLE bringup_marks_0022 RENAME TO bringup_marks;
