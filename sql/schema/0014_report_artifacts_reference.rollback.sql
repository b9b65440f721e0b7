ALTER TABLE boardready.run_results
  DROP CONSTRAINT run_results_report_reference,
  DROP COLUMN report_bytes,
  DROP COLUMN report_sha256;
