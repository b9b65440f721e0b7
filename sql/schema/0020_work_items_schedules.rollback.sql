-- Views over the tables go with them (sql/functions recreates what the older tree defines).
DROP VIEW IF EXISTS ops.dead_letters;
DROP VIEW IF EXISTS ops.work_items;
DROP VIEW IF EXISTS ops.schedules;
DROP TABLE IF EXISTS boardready.schedules;
DROP TABLE IF EXISTS boardready.work_items;
DROP TABLE IF EXISTS boardready.queue_item_shape;
