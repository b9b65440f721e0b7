-- A release run's supply checks by their run: deleting a release run (the
-- retention purge, an account's erasure) checks supply_checks' foreign key
-- to it, which without an index reads the whole table once per run.
-- depends: 0012_component_supply 0014_report_artifacts_reference

CREATE INDEX supply_checks_release_run ON boardready.supply_checks (release_run_id);
