ALTER TABLE boardready.run_findings DROP COLUMN relaxed;
