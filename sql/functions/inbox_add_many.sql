-- Adds many items in one statement, as inbox_add adds one, and returns them as inbox_add answers,
-- in the order given (NULL for an owner who is no member). p_items: [{owner, kind, actor,
-- subject_type, subject_id, url, excerpt}], in owner order (the caller sorts them: each owner's
-- counter row is locked in that order, so concurrent callers cannot deadlock on them). What
-- inbox_add does item by item is done here once per owner: its counter moves by its number of
-- items (their ids drawn in the order given), the retention bounds (5,000 items, 90 days) run once
-- for it, and its items' webhook deliveries are queued when it has an enabled webhook. The items,
-- their ids, the rows kept and the deliveries queued are those inbox_add called once per item in
-- that order leaves: the count bound deletes below the highest id drawn minus 5,000; the age bound
-- looks, as inbox_add does for each item, at the member's oldest 16 rows per item added (ids grow
-- with time). Task moves use it (task_moves_apply): one call for a group's items. Items are written
-- only here and by inbox_add, each for an owner whose counter row the statement has just written
-- (sql/036_task_refs_proven.sql relies on it: inbox_items has no key to identities).
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION inbox_add_many(p_items jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_at timestamptz := now();
  v_out jsonb;
  v_owners bigint[];
  v_counts bigint[];
  v_last bigint[];
BEGIN
  IF p_items IS NULL OR jsonb_array_length(p_items) = 0 THEN
    RETURN '[]'::jsonb;
  END IF;
  WITH it AS (
    SELECT x.n, (x.t->>'owner')::bigint AS owner, x.t->>'kind' AS kind, x.t->>'actor' AS actor,
           x.t->>'subject_type' AS subject_type, x.t->>'subject_id' AS subject_id, x.t->>'url' AS url,
           left(coalesce(x.t->>'excerpt', ''), 280) AS excerpt,
           row_number() OVER (PARTITION BY (x.t->>'owner')::bigint ORDER BY x.n) AS k
    FROM jsonb_array_elements(p_items) WITH ORDINALITY AS x(t, n)
  ), owners AS (
    SELECT it.owner, count(*) AS c FROM it GROUP BY it.owner
  ), ctr AS (
    INSERT INTO inbox_counters AS c (identity_id, last_id)
      SELECT o.owner, o.c FROM owners o WHERE EXISTS (SELECT 1 FROM identities i WHERE i.id = o.owner) ORDER BY o.owner
      ON CONFLICT (identity_id) DO UPDATE SET last_id = c.last_id + EXCLUDED.last_id
      RETURNING c.identity_id AS owner, c.last_id AS last
  ), items AS (
    SELECT it.*, ctr.last - o.c + it.k AS id, jsonb_build_object(
        'id', (ctr.last - o.c + it.k)::text, 'kind', it.kind,
        'created_at', to_char(v_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'actor', it.actor,
        'subject', jsonb_build_object('type', it.subject_type, 'id', it.subject_id, 'url', it.url),
        'excerpt', it.excerpt, 'read', false) AS item
    FROM it JOIN ctr ON ctr.owner = it.owner JOIN owners o ON o.owner = it.owner
  ), written AS (
    INSERT INTO inbox_items (identity_id, id, kind, actor, subject_type, subject_id, subject_url, excerpt, created_at)
      SELECT i.owner, i.id, i.kind, i.actor, i.subject_type, i.subject_id, i.url, i.excerpt, v_at FROM items i ORDER BY i.n
  ), queued AS (
    INSERT INTO inbox_outbox (identity_id, item_id, body)
      SELECT i.owner, i.id, jsonb_build_object(
        'type', 'inbox.item', 'timestamp', i.item->'created_at', 'registration_number', commons_number(i.owner),
        'content_trust', 'untrusted_user_content', 'data', i.item)::text
      FROM items i JOIN inbox_webhooks w ON w.identity_id = i.owner AND w.disabled_at IS NULL
      ORDER BY i.n
  )
  SELECT (SELECT jsonb_agg(i.item || jsonb_build_object('owner', it.owner) ORDER BY it.n) FROM it LEFT JOIN items i ON i.n = it.n),
         (SELECT array_agg(ctr.owner ORDER BY ctr.owner) FROM ctr),
         (SELECT array_agg(o.c ORDER BY ctr.owner) FROM ctr JOIN owners o ON o.owner = ctr.owner),
         (SELECT array_agg(ctr.last ORDER BY ctr.owner) FROM ctr)
    INTO v_out, v_owners, v_counts, v_last;
  -- The bounds, once per owner, as inbox_add keeps them (through the primary key only): the count
  -- bound is a range (ids are dense), the age bound looks at the oldest rows, 16 per item added.
  -- Those rows are picked first (the array, computed once) and their age checked there: written
  -- as `created_at < .. AND id IN (oldest)`, the planner scanned all the member's rows for the age
  -- (a bitmap scan of the key's prefix), up to 5,000 per owner per call.
  FOR i IN 1 .. coalesce(array_length(v_owners, 1), 0) LOOP
    DELETE FROM inbox_items WHERE identity_id = v_owners[i] AND id <= v_last[i] - 5000;
    DELETE FROM inbox_items WHERE identity_id = v_owners[i] AND id = ANY(ARRAY(
      SELECT d.id FROM (SELECT d.id, d.created_at FROM inbox_items d WHERE d.identity_id = v_owners[i]
                        ORDER BY d.id LIMIT 16 * v_counts[i]) d
      WHERE d.created_at < v_at - interval '90 days'));
  END LOOP;
  RETURN v_out;
END
$$;
