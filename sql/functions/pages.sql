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
