-- The report a signed result announces (its `reportArtifact`: SHA-256 and
-- size), kept with the result so that the upload is held to it: a report that
-- is not the one the signed digest covers is refused (artifact_store).
-- A second step of 0013 rather than an edit of it: databases that already
-- applied 0013 get the columns too.
-- depends: 0013_report_artifacts

ALTER TABLE boardready.run_results
  ADD COLUMN report_sha256 text CHECK (report_sha256 ~ '^[0-9a-f]{64}$'),
  ADD COLUMN report_bytes  integer CHECK (report_bytes BETWEEN 1 AND 67108864),
  ADD CONSTRAINT run_results_report_reference CHECK ((report_sha256 IS NULL) = (report_bytes IS NULL));
