-- The rest of what sql/functions dropped on every migrate (intake, lifecycle,
-- results, reviews), kept here once, as 0021 did for the queue files: older
-- signatures that 0.6.0's own migrate dropped already, so that release calls
-- none of them. run_result_publication's result grew source and
-- api_token_id before 0.6.0; a result type cannot be replaced, so the older
-- shape is dropped here and results.sql only creates or replaces it.
-- depends: 0030_review_comments

DROP FUNCTION IF EXISTS boardready.intake_accept_delivery(text, text, text, text, bigint, jsonb, text, integer,
                                                          timestamptz);
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
              WHERE n.nspname = 'boardready' AND p.proname = 'intake_accept_delivery'
                AND 'job_id' = ANY (p.proargnames)) THEN
    DROP FUNCTION boardready.intake_accept_delivery(text, text, text, text, bigint, jsonb, text, integer, integer,
                                                    timestamptz);
  END IF;
  IF EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
              WHERE n.nspname = 'boardready' AND p.proname = 'run_result_publication'
                AND NOT ('api_token_id' = ANY (p.proargnames))) THEN
    DROP FUNCTION boardready.run_result_publication(bigint);
  END IF;
END $$;
DROP FUNCTION IF EXISTS boardready.lifecycle_apply_installation(text, jsonb, timestamptz);
DROP FUNCTION IF EXISTS boardready.lifecycle_apply_installation_repositories(text, jsonb, timestamptz);
DROP FUNCTION IF EXISTS boardready.lifecycle_apply_pull_request(text, jsonb, timestamptz);
DROP FUNCTION IF EXISTS boardready.outbox_decision_published(bigint, uuid, text, timestamptz);
