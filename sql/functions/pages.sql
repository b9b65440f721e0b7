-- Reads of the review pages that need more than the API role may select.

-- The canceled accounts behind a session's installations (logins only): the
-- /runs page of a viewer who sees no repository says why, instead of an empty
-- list. Nothing about any other session or account.
CREATE OR REPLACE FUNCTION boardready.session_canceled_accounts(p_session_id uuid)
RETURNS TABLE (login text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  SELECT DISTINCT a.login
    FROM sessions s
    JOIN installations i ON i.id = ANY (s.installation_ids)
                         OR i.id IN (SELECT r.installation_id FROM repositories r WHERE r.id = ANY (s.repository_ids))
    JOIN accounts a ON a.id = i.account_id
    JOIN marketplace_accounts m ON m.account_id = a.id
   WHERE s.id = p_session_id AND m.state = 'canceled'
   ORDER BY a.login
$$;

-- What the pages show for the actors of a run's history (host-user:<id>,
-- token:<uuid>, operator:<id>, system): the login the service kept when the
-- person last signed in or opened a pull request, the token's name. At most
-- 200 actors a call; an actor nothing is known of is left out.
CREATE OR REPLACE FUNCTION boardready.people_logins(p_actors text[])
RETURNS TABLE (actor text, shown text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
  WITH wanted AS (
    SELECT a AS actor,
           CASE WHEN a ~ '^host-user:[0-9]{1,18}$' THEN substr(a, 11)::bigint END AS user_id,
           CASE WHEN a ~ '^token:[0-9a-f-]{36}$' THEN substr(a, 7)::uuid END AS token_id
      FROM unnest(p_actors[1:200]) AS a
  )
  SELECT w.actor,
         CASE
           WHEN w.user_id IS NOT NULL THEN coalesce(
             (SELECT s.viewer_login FROM sessions s WHERE s.viewer_id = w.user_id ORDER BY s.created_at DESC LIMIT 1),
             (SELECT ac.login FROM accounts ac WHERE ac.id = w.user_id),
             (SELECT pr.author_login FROM pull_requests pr WHERE pr.author_id = w.user_id AND pr.author_login IS NOT NULL
               ORDER BY pr.updated_at DESC LIMIT 1))
           WHEN w.token_id IS NOT NULL THEN (SELECT 'token ' || t.name FROM api_tokens t WHERE t.id = w.token_id)
           WHEN w.actor LIKE 'operator:%' THEN 'operator ' || substr(w.actor, 10)
           WHEN w.actor = 'system' THEN 'boardready'
         END AS shown
    FROM wanted w
$$;
