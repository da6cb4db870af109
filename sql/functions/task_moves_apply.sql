-- Writes what task moves decided (src/domain/task-moves.ts `planPost`, `planMove`), in the caller's
-- transaction and in one round trip: the node decides every move (the machine, the authorization,
-- the deadlines) and hands the rows here; nothing is decided in this function. Several members'
-- moves go in one call when grouped (src/domain/tasks.ts), in the order given:
--   accounts  [{id, kind, identity_id}]                       escrow accounts opened (posts)
--   transfers [{from, to, amount, kind, ref}]                 each one balance update per side, then its row
--   tasks     [{id, state, title, body, reward, poster_id, escrow_account, created_at, expires_at}]
--   moves     [{id, version, patch}]                          a patch of a task at `version` (bumped by one)
--   events    [{task_id, version, event, from, to, actor_id, at}]
--   points    [{identity_id, kind, points, ref}]
--   submissions [{task_id, author_id, body, created_at}]
--   items     [{owner, kind, actor, subject_type, subject_id, url, excerpt}]  (inbox_add_many, in owner order)
-- Returns {"seqs": [event seq, in the order of `events`], "items": [inbox_add_many's answer, in order]}.
-- Set-based where that writes the same rows: the moves' patches are one UPDATE when the call
-- moves each task once (the usual group), in turns otherwise; the items are one inbox_add_many;
-- a list left empty costs no statement.
-- A check the database makes (an overdraft: balance_not_negative; the escrow at commit) fails the
-- whole call, as it failed the move's transaction before; so does an event or a submission of a
-- task the call neither inserted nor moved (23503, the foreign keys' check, made here once).
-- Events and submissions are written here only (sql/036_task_refs_proven.sql relies on it).
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION task_moves_apply(p jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  r jsonb;
  pt jsonb;
  v_n integer;
  v_moves integer := jsonb_array_length(coalesce(p->'moves', '[]'));
  v_seqs jsonb := '[]'::jsonb;
  v_items jsonb := '[]'::jsonb;
BEGIN
  IF jsonb_array_length(coalesce(p->'accounts', '[]')) > 0 THEN
    INSERT INTO ledger_accounts (id, kind, identity_id)
      SELECT a->>'id', a->>'kind', (a->>'identity_id')::bigint
      FROM jsonb_array_elements(p->'accounts') WITH ORDINALITY AS x(a, n) ORDER BY n
      ON CONFLICT (id) DO NOTHING;
  END IF;
  IF jsonb_array_length(coalesce(p->'transfers', '[]')) > 0 THEN
    -- The accounts the transfers touch, locked in one order (id) before any balance moves, so two
    -- groups (two nodes) touching the same members cannot deadlock on them.
    PERFORM 1 FROM ledger_accounts
      WHERE id IN (SELECT t->>'from' FROM jsonb_array_elements(p->'transfers') t
                   UNION SELECT t->>'to' FROM jsonb_array_elements(p->'transfers') t)
      ORDER BY id FOR UPDATE;
    FOR r IN SELECT t FROM jsonb_array_elements(p->'transfers') WITH ORDINALITY AS x(t, n) ORDER BY n LOOP
      UPDATE ledger_accounts SET balance = balance - (r->>'amount')::bigint WHERE id = r->>'from';
      UPDATE ledger_accounts SET balance = balance + (r->>'amount')::bigint WHERE id = r->>'to';
    END LOOP;
    INSERT INTO ledger_transfers (from_account, to_account, amount, kind, ref)
      SELECT t->>'from', t->>'to', (t->>'amount')::bigint, t->>'kind', t->>'ref'
      FROM jsonb_array_elements(p->'transfers') WITH ORDINALITY AS x(t, n) ORDER BY n;
  END IF;
  IF jsonb_array_length(coalesce(p->'tasks', '[]')) > 0 THEN
    INSERT INTO tasks (id, state, title, body, reward_points, poster_id, escrow_account, created_at, expires_at)
      SELECT (t->>'id')::uuid, t->>'state', t->>'title', t->>'body', (t->>'reward')::int, (t->>'poster_id')::bigint,
             t->>'escrow_account', (t->>'created_at')::timestamptz, (t->>'expires_at')::timestamptz
      FROM jsonb_array_elements(p->'tasks') WITH ORDINALITY AS x(t, n) ORDER BY n;
  END IF;
  IF v_moves > 0 AND (SELECT count(DISTINCT m->>'id') FROM jsonb_array_elements(p->'moves') m) = v_moves THEN
    -- Each task moves once: one statement patches them all, each from the version it was decided from.
    UPDATE tasks t SET
      state = CASE WHEN m.pt ? 'state' THEN m.pt->>'state' ELSE t.state END,
      claimer_id = CASE WHEN m.pt ? 'claimer_id' THEN (m.pt->>'claimer_id')::bigint ELSE t.claimer_id END,
      expires_at = CASE WHEN m.pt ? 'expires_at' THEN (m.pt->>'expires_at')::timestamptz ELSE t.expires_at END,
      claimed_at = CASE WHEN m.pt ? 'claimed_at' THEN (m.pt->>'claimed_at')::timestamptz ELSE t.claimed_at END,
      claim_expires_at = CASE WHEN m.pt ? 'claim_expires_at' THEN (m.pt->>'claim_expires_at')::timestamptz ELSE t.claim_expires_at END,
      delivered_at = CASE WHEN m.pt ? 'delivered_at' THEN (m.pt->>'delivered_at')::timestamptz ELSE t.delivered_at END,
      approve_by = CASE WHEN m.pt ? 'approve_by' THEN (m.pt->>'approve_by')::timestamptz ELSE t.approve_by END,
      approved_at = CASE WHEN m.pt ? 'approved_at' THEN (m.pt->>'approved_at')::timestamptz ELSE t.approved_at END,
      approved_how = CASE WHEN m.pt ? 'approved_how' THEN m.pt->>'approved_how' ELSE t.approved_how END,
      closed_at = CASE WHEN m.pt ? 'closed_at' THEN (m.pt->>'closed_at')::timestamptz ELSE t.closed_at END,
      closed_reason = CASE WHEN m.pt ? 'closed_reason' THEN m.pt->>'closed_reason' ELSE t.closed_reason END,
      version = t.version + 1
    FROM (SELECT (x->>'id')::uuid AS id, (x->>'version')::int AS version, x->'patch' AS pt
          FROM jsonb_array_elements(p->'moves') x) m
    WHERE t.id = m.id AND t.version = m.version
      AND t.id = ANY(ARRAY(SELECT (x->>'id')::uuid FROM jsonb_array_elements(p->'moves') x));
    GET DIAGNOSTICS v_n = ROW_COUNT;
    IF v_n <> v_moves THEN
      RAISE EXCEPTION 'a task of this call changed under its lock';
    END IF;
  ELSIF v_moves > 0 THEN
    -- One task may move twice in one call (a deadline fired on the way to a caller's move): each
    -- patch is its own update, in order, and must find the version it was decided from.
    FOR r IN SELECT m FROM jsonb_array_elements(p->'moves') WITH ORDINALITY AS x(m, n) ORDER BY n LOOP
      pt := r->'patch';
      UPDATE tasks SET
        state = CASE WHEN pt ? 'state' THEN pt->>'state' ELSE state END,
        claimer_id = CASE WHEN pt ? 'claimer_id' THEN (pt->>'claimer_id')::bigint ELSE claimer_id END,
        expires_at = CASE WHEN pt ? 'expires_at' THEN (pt->>'expires_at')::timestamptz ELSE expires_at END,
        claimed_at = CASE WHEN pt ? 'claimed_at' THEN (pt->>'claimed_at')::timestamptz ELSE claimed_at END,
        claim_expires_at = CASE WHEN pt ? 'claim_expires_at' THEN (pt->>'claim_expires_at')::timestamptz ELSE claim_expires_at END,
        delivered_at = CASE WHEN pt ? 'delivered_at' THEN (pt->>'delivered_at')::timestamptz ELSE delivered_at END,
        approve_by = CASE WHEN pt ? 'approve_by' THEN (pt->>'approve_by')::timestamptz ELSE approve_by END,
        approved_at = CASE WHEN pt ? 'approved_at' THEN (pt->>'approved_at')::timestamptz ELSE approved_at END,
        approved_how = CASE WHEN pt ? 'approved_how' THEN pt->>'approved_how' ELSE approved_how END,
        closed_at = CASE WHEN pt ? 'closed_at' THEN (pt->>'closed_at')::timestamptz ELSE closed_at END,
        closed_reason = CASE WHEN pt ? 'closed_reason' THEN pt->>'closed_reason' ELSE closed_reason END,
        version = version + 1
      WHERE id = (r->>'id')::uuid AND version = (r->>'version')::int;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'task % changed under its lock', r->>'id';
      END IF;
    END LOOP;
  END IF;
  -- Each event and submission is of a task this call inserted or moved (found above at its
  -- version): what the foreign keys of task_events and task_submissions checked row by row
  -- (dropped, sql/036_task_refs_proven.sql), proven here once for the call.
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(p->'events', '[]') || coalesce(p->'submissions', '[]')) w
             WHERE (w->>'task_id')::uuid NOT IN (
               SELECT (x->>'id')::uuid FROM jsonb_array_elements(coalesce(p->'moves', '[]') || coalesce(p->'tasks', '[]')) x)) THEN
    RAISE EXCEPTION 'an event or a submission of a task this call neither inserted nor moved'
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  IF jsonb_array_length(coalesce(p->'events', '[]')) > 0 THEN
    WITH ev AS (
      SELECT x.n, (x.t->>'task_id')::uuid AS task_id, (x.t->>'version')::int AS version, x.t
      FROM jsonb_array_elements(p->'events') WITH ORDINALITY AS x(t, n)
    ), e AS (
      INSERT INTO task_events (task_id, version, event, from_state, to_state, actor_id, at)
        SELECT ev.task_id, ev.version, ev.t->>'event', ev.t->>'from', ev.t->>'to', (ev.t->>'actor_id')::bigint,
               (ev.t->>'at')::timestamptz
        FROM ev ORDER BY ev.n
        RETURNING seq, task_id, version
    )
    SELECT jsonb_agg(e.seq::text ORDER BY ev.n) INTO v_seqs
      FROM ev JOIN e ON e.task_id = ev.task_id AND e.version = ev.version;
  END IF;
  IF jsonb_array_length(coalesce(p->'points', '[]')) > 0 THEN
    -- In member order: each row moves its member's identity_scores row (a trigger), so concurrent
    -- calls take those in one order too.
    INSERT INTO point_events (identity_id, kind, points, ref)
      SELECT (t->>'identity_id')::bigint, t->>'kind', (t->>'points')::int, t->>'ref'
      FROM jsonb_array_elements(p->'points') WITH ORDINALITY AS x(t, n) ORDER BY (t->>'identity_id')::bigint, n;
  END IF;
  IF jsonb_array_length(coalesce(p->'submissions', '[]')) > 0 THEN
    INSERT INTO task_submissions (task_id, author_id, body, created_at)
      SELECT (t->>'task_id')::uuid, (t->>'author_id')::bigint, t->>'body', (t->>'created_at')::timestamptz
      FROM jsonb_array_elements(p->'submissions') WITH ORDINALITY AS x(t, n) ORDER BY n;
  END IF;
  IF jsonb_array_length(coalesce(p->'items', '[]')) > 0 THEN
    v_items := inbox_add_many(p->'items');
  END IF;
  RETURN jsonb_build_object('seqs', v_seqs, 'items', v_items);
END
$$;
