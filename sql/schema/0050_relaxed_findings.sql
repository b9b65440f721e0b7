-- A finding the pull request's own policy relaxed (checker/policy.py): the
-- run result's "relaxed" (what the head's policy made of it and which of its
-- settings did), kept with the finding. NULL for every other finding and for
-- every result of a checker that does not compare policies; the release
-- decision counts a relaxed blocking finding until a person other than the
-- author approves (sql/functions/reviews_relaxed.sql). A nullable column without a
-- default: no table rewrite, the lock held only to change the catalogue.
-- depends: 0037_previous_release_helpers_contract
ALTER TABLE boardready.run_findings ADD COLUMN relaxed jsonb;
