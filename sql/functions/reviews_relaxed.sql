-- Policy relaxation: a pull request cannot relax its own gate.
--
-- The checker judges the head under the base commit's policy as well as its
-- own (checker/policy.py); a finding that blocks under the base's and not
-- under the head's arrives at the base's severity with "relaxed" (stored in
-- run_findings.relaxed). Such a finding counts as the base says until the
-- review is approved: an approval (never the author's own, unless by break
-- glass, reviews.sql) accepts the relaxation as a waiver would. A standing
-- waiver of its fingerprint covers it as it covers any finding.

-- The release decision with relaxed findings (boardready_private.release_decision
-- and checker/verdict.py release_decision, kept equal by a test): p_relaxed of
-- the unwaived blocking findings are relaxed ones; an approval takes them out.
CREATE OR REPLACE FUNCTION boardready_private.release_decision(
  p_readiness_decision text, p_review_decision text, p_blocking integer, p_unwaived_blocking integer,
  p_relaxed integer)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT boardready_private.release_decision(
    p_readiness_decision, p_review_decision, p_blocking,
    CASE WHEN p_review_decision = 'approved' THEN p_unwaived_blocking - coalesce(p_relaxed, 0)
         ELSE p_unwaived_blocking END)
$$;

-- The relaxed blocking findings of a release run's latest result that no
-- standing waiver covers, as of p_now.
CREATE OR REPLACE FUNCTION boardready_private.release_decision_relaxed(p_release_run_id bigint, p_now timestamptz)
RETURNS integer LANGUAGE sql STABLE AS $$
  WITH result AS (
    SELECT r.id, r.repository_id FROM boardready.run_results r
     WHERE r.release_run_id = p_release_run_id ORDER BY r.id DESC LIMIT 1
  )
  SELECT count(*)::integer
    FROM result JOIN boardready.run_findings f ON f.run_result_id = result.id
   WHERE f.relaxed IS NOT NULL AND f.severity IN ('error', 'high')
     AND NOT EXISTS (SELECT 1 FROM boardready.waivers w
                      WHERE w.repository_id = result.repository_id AND w.fingerprint = f.fingerprint
                        AND w.deleted_at IS NULL AND (w.expires_at IS NULL OR w.expires_at > p_now))
$$;

-- What a release run's latest result relaxed: each setting (file, setting)
-- once, with how many findings it relaxed; '[]' when nothing was. Recorded
-- with the approval that accepts it (reviews.sql).
CREATE OR REPLACE FUNCTION boardready_private.release_run_relaxed_settings(p_release_run_id bigint)
RETURNS jsonb LANGUAGE sql STABLE AS $$
  WITH result AS (
    SELECT r.id FROM boardready.run_results r
     WHERE r.release_run_id = p_release_run_id ORDER BY r.id DESC LIMIT 1
  ), settings AS (
    SELECT s.value ->> 'file' AS file, s.value ->> 'setting' AS setting, count(*) AS findings, min(f.ordinal) AS first
      FROM result JOIN boardready.run_findings f ON f.run_result_id = result.id
      CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(f.relaxed -> 'settings') = 'array'
                                                   THEN f.relaxed -> 'settings' ELSE '[]'::jsonb END) s
     WHERE f.relaxed IS NOT NULL
     GROUP BY 1, 2
  )
  SELECT coalesce(jsonb_agg(jsonb_build_object('file', file, 'setting', setting, 'findings', findings)
                            ORDER BY first, file, setting), '[]'::jsonb)
    FROM settings
$$;
