-- Chat posts verify their member token in the same statement (DESIGN.md "Writes are grouped"):
-- a member's post may carry the hash (hex) of the token it was sent with, read from the node's
-- token cache instead of the database; the row is written only if that hash is still the member's
-- token, in the statement that writes it, so a token rotated or revoked on any node is refused by
-- the write itself (DECISIONS.md "Reliability promises") and the check costs no round trip of its
-- own. A refused row is not returned (the caller answers 401), earns no point and mentions no one.
-- Otherwise as sql/016_inbox.sql's chat_post (mentions written by the same statement).
DROP FUNCTION chat_post(uuid[], text[], bigint[], bigint[], text[], timestamptz[], bigint[], text[], uuid[], bigint[], text);

CREATE FUNCTION chat_post(
  p_ids uuid[], p_bodies text[], p_authors bigint[], p_token_hashes text[], p_guests bigint[], p_labels text[],
  p_ats timestamptz[], p_guest_numbers bigint[], p_guest_labels text[], p_mention_msgs uuid[], p_mention_to bigint[],
  p_url text
) RETURNS TABLE (id uuid, seq bigint, items jsonb) LANGUAGE plpgsql AS $$
DECLARE
  v_items jsonb;
  v_refused uuid[];
BEGIN
  SELECT coalesce(array_agg(u.mid), '{}') INTO v_refused
    FROM unnest(p_ids, p_authors, p_token_hashes) AS u(mid, author_id, token_hash)
    WHERE u.token_hash IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM identities i WHERE i.id = u.author_id AND i.token_hash = decode(u.token_hash, 'hex'));
  -- A guest's row is created on its first write (DECISIONS.md "Guest issuance").
  INSERT INTO guests (number, label)
    SELECT * FROM unnest(p_guest_numbers, p_guest_labels)
    ON CONFLICT (number) DO UPDATE SET label = COALESCE(EXCLUDED.label, guests.label);
  PERFORM pg_advisory_xact_lock(7262003);
  SELECT coalesce(jsonb_object_agg(g.mid, g.arr), '{}'::jsonb) INTO v_items FROM (
    SELECT a.mid::text AS mid, jsonb_agg(a.item ORDER BY a.ord) AS arr FROM (
      SELECT u.mid, u.ord, inbox_add(u.owner, 'mention',
          CASE WHEN w.author_id IS NOT NULL THEN commons_number(w.author_id)
               ELSE 'GUEST-' || lpad(w.guest_number::text, 8, '0') END,
          'chat_message', u.mid::text, p_url, w.body) AS item
      FROM unnest(p_mention_msgs, p_mention_to) WITH ORDINALITY AS u(mid, owner, ord)
      JOIN unnest(p_ids, p_bodies, p_authors, p_guests) AS w(mid, body, author_id, guest_number) ON w.mid = u.mid
      WHERE NOT (u.mid = ANY(v_refused))
      ORDER BY u.ord) a
    WHERE a.item IS NOT NULL GROUP BY a.mid) g;
  RETURN QUERY
    WITH written AS (
      INSERT INTO chat_messages AS m (id, body, author_id, guest_number, guest_label, created_at)
      SELECT u.id, u.body, u.author_id, u.guest_number, u.guest_label, u.created_at
      FROM unnest(p_ids, p_bodies, p_authors, p_guests, p_labels, p_ats)
        WITH ORDINALITY AS u(id, body, author_id, guest_number, guest_label, created_at, ord)
      WHERE NOT (u.id = ANY(v_refused))
      ORDER BY u.ord
      RETURNING m.id, m.seq, m.author_id, m.guest_number
    ), points AS (
      INSERT INTO point_events (identity_id, guest_number, kind, points, ref)
      SELECT w.author_id, CASE WHEN w.author_id IS NULL THEN w.guest_number END, 'chat_message', 1, w.id::text
      FROM written w
    )
    SELECT w.id, w.seq, coalesce(v_items -> w.id::text, '[]'::jsonb) FROM written w;
END
$$;
