ALTER TABLE boardready.review_approvals DROP COLUMN comment CASCADE, DROP COLUMN comment_at CASCADE;
