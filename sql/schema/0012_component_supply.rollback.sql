-- Views and functions over these tables are re-created by the next migrate.
DROP VIEW IF EXISTS ops.component_provider_breakers;
DROP VIEW IF EXISTS ops.component_provider_breaker_transitions;
DROP VIEW IF EXISTS ops.watched_boards;
DROP TABLE boardready.supply_checks;
DROP TABLE boardready.component_provider_breaker_transitions;
DROP TABLE boardready.component_provider_breakers;
DROP TABLE boardready.component_provider_calls;
DROP TABLE boardready.part_lifecycle_observations;
DROP TABLE boardready.watched_boards;
DROP TABLE boardready.run_bom_lines;
