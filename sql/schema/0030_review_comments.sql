-- A request for changes keeps the reviewer's comment (the run page's history
-- shows it; it is posted on the pull request too). comment_at is the
-- approval's updated_at when the comment was written: the previous release's
-- review_record_approval replaces a standing approval without knowing the
-- column, so a comment is shown only while comment_at = updated_at.
-- depends: 0021_function_tombstones
ALTER TABLE boardready.review_approvals
  ADD COLUMN comment text CHECK (length(comment) BETWEEN 1 AND 4000),
  ADD COLUMN comment_at timestamptz;
