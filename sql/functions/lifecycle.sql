-- Lifecycle handlers: apply a job's normalized actions to installations,
-- repositories and pull requests, and complete the job, in one transaction.
-- Every handler is an upsert, so a redelivery or an out-of-order event converges.

CREATE OR REPLACE FUNCTION boardready_private.lifecycle_upsert_account(p_account jsonb, p_now timestamptz)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint := (p_account ->> 'id')::bigint;
BEGIN
  IF v_id IS NULL THEN
    RETURN NULL;
  END IF;
  -- Looked at first: ON CONFLICT DO UPDATE locks the existing row even when
  -- its WHERE is false, so every job of one account would wait for the one
  -- before it to commit. The upsert runs only when something would change.
  PERFORM FROM boardready.accounts a
    WHERE a.id = v_id
      AND (a.login, a.type) IS NOT DISTINCT FROM (p_account ->> 'login', coalesce(p_account ->> 'type', 'Unknown'));
  IF FOUND THEN
    RETURN v_id;
  END IF;
  INSERT INTO boardready.accounts AS a (id, login, type, created_at, updated_at)
  VALUES (v_id, p_account ->> 'login', coalesce(p_account ->> 'type', 'Unknown'), p_now, p_now)
  ON CONFLICT (id) DO UPDATE SET login = EXCLUDED.login, type = EXCLUDED.type, updated_at = p_now
    WHERE (a.login, a.type) IS DISTINCT FROM (EXCLUDED.login, EXCLUDED.type);
  RETURN v_id;
END $$;

-- Make sure the installation row exists. An event for an installation the
-- service has not seen created (installed before the service ran, or events
-- out of order) proves it exists; the account is filled in when known.
CREATE OR REPLACE FUNCTION boardready_private.lifecycle_ensure_installation(p_installation jsonb, p_now timestamptz)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_id      bigint := (p_installation ->> 'id')::bigint;
  v_account bigint := boardready_private.lifecycle_upsert_account(p_installation -> 'account', p_now);
BEGIN
  -- Looked at first, as the account above: the upsert would lock the row
  -- even when nothing changes, and every job of one installation waited
  -- for the one before it to commit (4.6 ms a job, docs/benchmarks.md).
  PERFORM FROM boardready.installations i
    WHERE i.id = v_id AND (v_account IS NULL OR i.account_id IS NOT DISTINCT FROM v_account);
  IF FOUND THEN
    RETURN v_id;
  END IF;
  INSERT INTO boardready.installations AS i (id, account_id, status, created_at, updated_at)
  VALUES (v_id, v_account, 'active', p_now, p_now)
  ON CONFLICT (id) DO UPDATE SET account_id = coalesce(EXCLUDED.account_id, i.account_id), updated_at = p_now
    WHERE v_account IS NOT NULL AND i.account_id IS DISTINCT FROM v_account;
  RETURN v_id;
END $$;

CREATE OR REPLACE FUNCTION boardready_private.lifecycle_upsert_repositories(
  p_installation_id bigint, p_repositories jsonb, p_now timestamptz)
RETURNS integer LANGUAGE sql AS $$
  WITH upserted AS (
    INSERT INTO boardready.repositories AS r (id, installation_id, full_name, private, removed_at, created_at,
                                              updated_at)
    SELECT (x ->> 'id')::bigint, p_installation_id, x ->> 'fullName', (x ->> 'private')::boolean, NULL, p_now, p_now
      FROM jsonb_array_elements(coalesce(p_repositories, '[]'::jsonb)) AS x
    ON CONFLICT (id) DO UPDATE
       SET installation_id = EXCLUDED.installation_id, full_name = EXCLUDED.full_name,
           private = coalesce(EXCLUDED.private, r.private), removed_at = NULL, updated_at = p_now
    RETURNING 1)
  SELECT count(*)::integer FROM upserted
$$;

CREATE OR REPLACE FUNCTION boardready_private.lifecycle_remove_repositories(
  p_installation_id bigint, p_repositories jsonb, p_now timestamptz)
RETURNS integer LANGUAGE sql AS $$
  WITH removed AS (
    UPDATE boardready.repositories r SET removed_at = p_now, updated_at = p_now
     WHERE r.installation_id = p_installation_id AND r.removed_at IS NULL
       AND r.id IN (SELECT (x ->> 'id')::bigint FROM jsonb_array_elements(coalesce(p_repositories, '[]'::jsonb)) AS x)
    RETURNING 1)
  SELECT count(*)::integer FROM removed
$$;

-- Each apply function gets the event's installation made sure of
-- (lifecycle_job_process), which every event the service acts on names.

CREATE OR REPLACE FUNCTION boardready_private.lifecycle_apply_installation(
  p_action text, p_installation_id bigint, p_actions jsonb, p_now timestamptz)
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  CASE p_action
    WHEN 'created', 'new_permissions_accepted', 'unsuspend' THEN
      UPDATE boardready.installations SET status = 'active', updated_at = p_now
       WHERE id = p_installation_id AND status <> 'active';
      PERFORM boardready_private.lifecycle_upsert_repositories(p_installation_id, p_actions -> 'repositories', p_now);
      RETURN 'installation_' || p_action;
    WHEN 'suspend' THEN
      UPDATE boardready.installations SET status = 'suspended', updated_at = p_now WHERE id = p_installation_id;
      RETURN 'installation_suspend';
    WHEN 'deleted' THEN
      UPDATE boardready.installations SET status = 'deleted', updated_at = p_now WHERE id = p_installation_id;
      UPDATE boardready.repositories SET removed_at = p_now, updated_at = p_now
       WHERE installation_id = p_installation_id AND removed_at IS NULL;
      RETURN 'installation_deleted';
    ELSE
      RETURN 'noop';
  END CASE;
END $$;

CREATE OR REPLACE FUNCTION boardready_private.lifecycle_apply_installation_repositories(
  p_action text, p_installation_id bigint, p_actions jsonb, p_now timestamptz)
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  IF p_action NOT IN ('added', 'removed') THEN
    RETURN 'noop';
  END IF;
  -- Both lists may be present on either action; apply both.
  PERFORM boardready_private.lifecycle_upsert_repositories(p_installation_id, p_actions -> 'repositoriesAdded', p_now);
  PERFORM boardready_private.lifecycle_remove_repositories(p_installation_id, p_actions -> 'repositoriesRemoved', p_now);
  RETURN 'repositories_' || p_action;
END $$;

CREATE OR REPLACE FUNCTION boardready_private.lifecycle_apply_pull_request(
  p_action text, p_installation_id bigint, p_actions jsonb, p_now timestamptz)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  v_repo         jsonb := p_actions -> 'repository';
  v_pr           jsonb := p_actions -> 'pullRequest';
  v_repo_id      bigint := (v_repo ->> 'id')::bigint;
  v_number       integer := (v_pr ->> 'number')::integer;
  v_status       text;
  v_removed      timestamptz;
  v_opened       text;
BEGIN
  -- The repository is known from the installation events; a pull request
  -- event for one not yet seen registers it (events can arrive out of order).
  INSERT INTO boardready.repositories AS r (id, installation_id, full_name, private, created_at, updated_at)
  VALUES (v_repo_id, p_installation_id, v_repo ->> 'fullName', (v_repo ->> 'private')::boolean, p_now, p_now)
  ON CONFLICT (id) DO NOTHING;

  INSERT INTO boardready.pull_requests AS p (repository_id, number, head_sha, head_ref, base_ref, state, draft, updated_at,
                                             author_id, author_login)
  VALUES (v_repo_id, v_number, v_pr ->> 'headSha', v_pr ->> 'headRef', v_pr ->> 'baseRef',
          coalesce(v_pr ->> 'state', 'open'), coalesce((v_pr ->> 'draft')::boolean, false), p_now,
          (v_pr #>> '{author,id}')::bigint, v_pr #>> '{author,login}')
  ON CONFLICT (repository_id, number) DO UPDATE
     SET head_sha = EXCLUDED.head_sha, head_ref = EXCLUDED.head_ref, base_ref = EXCLUDED.base_ref,
         state = EXCLUDED.state, draft = EXCLUDED.draft, updated_at = p_now,
         -- The author (the review's creator, reviews.sql); kept when an event leaves it out.
         author_id = coalesce(EXCLUDED.author_id, p.author_id),
         author_login = coalesce(EXCLUDED.author_login, p.author_login);

  IF p_action NOT IN ('opened', 'synchronize', 'reopened', 'ready_for_review') THEN
    RETURN 'pull_request_recorded';
  END IF;

  SELECT i.status, r.removed_at INTO v_status, v_removed
    FROM boardready.repositories r JOIN boardready.installations i ON i.id = r.installation_id
   WHERE r.id = v_repo_id;
  IF v_status <> 'active' OR v_removed IS NOT NULL THEN
    RETURN 'skipped_inactive_installation';
  END IF;
  -- A job accepted before the account's cancellation still opens no release run.
  IF boardready_private.installation_account_canceled(p_installation_id, NULL) THEN
    RETURN 'skipped_account_canceled';
  END IF;
  -- A draft is not checked until it is marked ready for review.
  IF coalesce((v_pr ->> 'draft')::boolean, false) THEN
    RETURN 'skipped_draft';
  END IF;

  SELECT o.outcome INTO v_opened
    FROM boardready_private.release_run_open(v_repo_id, p_installation_id, v_number, v_pr ->> 'headSha',
                                     -- The default branch's workflow judges every pull request; only a
                                     -- delivery normalized by 0.7.0 lacks it.
                                     coalesce(v_repo ->> 'defaultBranch', v_pr ->> 'baseRef', 'main'), p_action,
                                     p_now) o;
  RETURN v_opened;
END $$;

-- The lifecycle handler: one transaction applies the effect and completes the
-- job, and only while the caller's lease is still the current one (the lease
-- and completion rules of queue.sql.j2). Returns the outcome.
CREATE OR REPLACE FUNCTION boardready_private.lifecycle_job_apply(
  p_job_id bigint, p_lease_token uuid, p_now timestamptz)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  v_job          boardready.lifecycle_jobs%ROWTYPE;
  v_actions      jsonb;
  v_installation bigint;
  v_outcome      text;
BEGIN
  IF boardready_private.job_lock_leased(p_job_id, p_lease_token) IS NULL THEN
    RETURN 'lease_lost';
  END IF;
  SELECT * INTO v_job FROM boardready.lifecycle_jobs j WHERE j.id = p_job_id;

  SELECT i.actions INTO v_actions FROM boardready.webhook_inbox i WHERE i.id = v_job.inbox_id;
  IF v_job.kind IN ('installation', 'installation_repositories', 'pull_request') THEN
    -- An event for an installation not seen created proves it exists.
    v_installation := boardready_private.lifecycle_ensure_installation(v_actions -> 'installation', p_now);
  END IF;
  v_outcome := CASE v_job.kind
    WHEN 'installation' THEN boardready_private.lifecycle_apply_installation(v_job.action, v_installation, v_actions, p_now)
    WHEN 'installation_repositories' THEN
      boardready_private.lifecycle_apply_installation_repositories(v_job.action, v_installation, v_actions, p_now)
    WHEN 'pull_request' THEN boardready_private.lifecycle_apply_pull_request(v_job.action, v_installation, v_actions, p_now)
    ELSE 'noop'
  END;

  PERFORM boardready.job_complete(p_job_id, p_lease_token, v_outcome, p_now);
  RETURN v_outcome;
END $$;

-- The handler as this release's lifecycle worker calls it: outbox work the
-- job queues sends no NOTIFY (outbox_enqueue, release_runs.sql); instead
-- outbox_waiting tells the caller to wake the outbox workers after its
-- commit (app/wakeup.py). A NOTIFY makes its commit take a cluster-wide lock
-- held through the commit record's flush, so the jobs' commits queued behind
-- each other, and every job woke every listening session.
--
-- Its commit does not wait for the WAL flush (synchronous_commit off, this
-- transaction only): a crash may lose the last few hundred milliseconds of
-- jobs, whole transactions only, which leave nothing behind: their jobs are
-- claimed again once their leases run out. Nothing outside the database acts on
-- a job's effect before a later durable commit: the outbox claims its work,
-- and a request changes what it read, in transactions of their own, whose
-- flush covers every commit before them in the WAL, this one included. The
-- delivery itself was stored durably before the intake answered.
CREATE OR REPLACE FUNCTION boardready.lifecycle_job_run(
  p_job_id bigint, p_lease_token uuid, p_now timestamptz DEFAULT now())
RETURNS TABLE (outcome text, outbox_waiting boolean)
LANGUAGE plpgsql ROWS 1 SECURITY DEFINER SET search_path = boardready, pg_temp AS $$
DECLARE
  v_outcome text;
  v_waiting boolean;
BEGIN
  PERFORM set_config('boardready.outbox_notify', 'caller', true);
  PERFORM set_config('synchronous_commit', 'off', true);
  v_outcome := boardready_private.lifecycle_job_apply(p_job_id, p_lease_token, p_now);
  v_waiting := current_setting('boardready.outbox_notify') = 'owed';
  -- Whatever else the caller's transaction does notifies as always.
  PERFORM set_config('boardready.outbox_notify', '', true);
  RETURN QUERY SELECT v_outcome, v_waiting;
END $$;
