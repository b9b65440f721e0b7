-- Nothing to undo: 0035's rollback moves every helper back.
SELECT 1;
