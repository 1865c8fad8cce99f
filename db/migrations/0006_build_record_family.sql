-- 0006: a build record is one per job attempt, target, family and variant. Variant names
-- repeat across families (gemm.simt, attention.simt), so the upload key needs the family.

DROP INDEX build_records_upload;
CREATE UNIQUE INDEX build_records_upload ON build_records(job_id, attempt, target, family, variant)
  WHERE job_id IS NOT NULL;
