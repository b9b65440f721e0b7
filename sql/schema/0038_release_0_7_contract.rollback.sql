-- With this migration rolled back, app/migrations.py applies
-- sql/compat/0_7.sql again on its next run; 0.6.0's functions are gone with
-- its release. The two lease columns come back empty.
ALTER TABLE boardready.watched_boards ADD COLUMN IF NOT EXISTS refresh_leased_until timestamptz;
ALTER TABLE boardready.supply_checks ADD COLUMN IF NOT EXISTS leased_until timestamptz;
