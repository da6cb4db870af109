-- Adds one item for p_owner and returns it as the API shows it (with `owner`, the identity id),
-- or NULL when p_owner is no member. Keeps the retention bounds (90 days, 5,000 items) and, when
-- the member has an enabled webhook, queues the item's delivery: all in the caller's transaction.
-- The item is written only once its owner's counter row is (sql/036_task_refs_proven.sql relies on
-- it: inbox_items has no key to identities).
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION inbox_add(
  p_owner bigint, p_kind text, p_actor text, p_subject_type text, p_subject_id text, p_url text, p_excerpt text
) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
  v_at timestamptz := now();
  v_item jsonb;
BEGIN
  INSERT INTO inbox_counters AS c (identity_id, last_id)
    SELECT p_owner, 1 WHERE EXISTS (SELECT 1 FROM identities WHERE id = p_owner)
    ON CONFLICT (identity_id) DO UPDATE SET last_id = c.last_id + 1
    RETURNING c.last_id INTO v_id;
  IF v_id IS NULL THEN
    RETURN NULL;
  END IF;
  INSERT INTO inbox_items (identity_id, id, kind, actor, subject_type, subject_id, subject_url, excerpt, created_at)
    VALUES (p_owner, v_id, p_kind, p_actor, p_subject_type, p_subject_id, p_url, left(coalesce(p_excerpt, ''), 280), v_at);
  -- Both bounds read the member's oldest rows through the primary key only: the count bound is a
  -- range (ids are dense), the age bound looks at the oldest few (ids grow with time), picked
  -- first and their age checked there (as `created_at < .. AND id IN (oldest 16)` the planner
  -- scanned all the member's rows for the age, up to 5,000).
  DELETE FROM inbox_items WHERE identity_id = p_owner AND id <= v_id - 5000;
  DELETE FROM inbox_items WHERE identity_id = p_owner AND id = ANY(ARRAY(
    SELECT i.id FROM (SELECT i.id, i.created_at FROM inbox_items i WHERE i.identity_id = p_owner ORDER BY i.id LIMIT 16) i
    WHERE i.created_at < v_at - interval '90 days'));
  v_item := jsonb_build_object(
    'id', v_id::text, 'kind', p_kind,
    'created_at', to_char(v_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'actor', p_actor,
    'subject', jsonb_build_object('type', p_subject_type, 'id', p_subject_id, 'url', p_url),
    'excerpt', left(coalesce(p_excerpt, ''), 280), 'read', false);
  INSERT INTO inbox_outbox (identity_id, item_id, body)
    SELECT p_owner, v_id, jsonb_build_object(
      'type', 'inbox.item', 'timestamp', v_item->'created_at', 'registration_number', commons_number(p_owner),
      'content_trust', 'untrusted_user_content', 'data', v_item)::text
    FROM inbox_webhooks WHERE identity_id = p_owner AND disabled_at IS NULL;
  RETURN v_item || jsonb_build_object('owner', p_owner);
END
$$;
