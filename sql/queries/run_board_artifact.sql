-- GET /release-runs/{id}/board.json: the report artifact of the run's latest
-- result (the one the run page links), for a run among the caller's
-- repositories; the board drawing's data is read out of it
-- (app/web/pages/board_view.py).
SELECT art.id, art.content
  FROM boardready.release_runs rr
  JOIN LATERAL (SELECT r.id FROM boardready.run_results r
                 WHERE r.release_run_id = rr.id ORDER BY r.id DESC LIMIT 1) res ON true
  JOIN boardready.report_artifacts art ON art.run_result_id = res.id
 WHERE rr.id = %(release_run_id)s AND rr.repository_id = ANY (%(repository_ids)s::bigint[])
