-- The report artifacts stored for the release runs of one head commit (bin/demo).
SELECT art.id, art.size_bytes, res.release_run_id
  FROM boardready.report_artifacts art
  JOIN boardready.run_results res ON res.id = art.run_result_id
 WHERE res.head_sha = %(head_sha)s
 ORDER BY art.id
