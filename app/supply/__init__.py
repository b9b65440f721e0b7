"""Component supply tracking: what the API and the supply worker share (the
provider client, its settings, the worker's use of the SQL budget and breaker).
The SQL side is sql/functions/supply.sql."""
