-- Nothing to put back here: with this migration rolled back, app/migrations.py
-- applies sql/compat/0_7.sql again on its next run; 0.6.0's functions are
-- gone with its release.
SELECT 1;
