-- 0019: the op families libraries declare (their kport.json `families`), as the build
-- runner reports them with the kernel catalog. One row per repository, library and
-- family; a report replaces what that repository's library declared before. The
-- family's declaration is kept as GET /api/v1/families answers it (`definition_json`),
-- `position` its place in the manifest. kport's own families are not stored: the
-- coordinator reads them from the installed kernels/kport.json.
CREATE TABLE op_families (
  repo            TEXT NOT NULL,
  library         TEXT NOT NULL,
  name            TEXT NOT NULL,
  position        INTEGER NOT NULL,
  definition_json TEXT NOT NULL,
  updated_ms      INTEGER NOT NULL,
  PRIMARY KEY (repo, library, name)
);
