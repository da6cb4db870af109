-- As sql/020_chat_post_tokens.sql, with the search columns written by the insert.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION chat_post(
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
    WITH batch AS (
      SELECT u.*, to_tsvector('simple'::regconfig, u.body) AS tsv
      FROM unnest(p_ids, p_bodies, p_authors, p_guests, p_labels, p_ats)
        WITH ORDINALITY AS u(id, body, author_id, guest_number, guest_label, created_at, ord)
      WHERE NOT (u.id = ANY(v_refused))
    ), words AS (
      SELECT b.ord, w.lexeme, unnest(w.positions) AS pos FROM batch b, unnest(b.tsv) AS w
    ), pairs AS (
      SELECT a.ord, array_agg(DISTINCT a.lexeme || ' ' || c.lexeme) AS arr
      FROM words a JOIN words c ON c.ord = a.ord AND c.pos = a.pos + 1
      GROUP BY a.ord
    ), written AS (
      INSERT INTO chat_messages AS m (id, body, author_id, guest_number, guest_label, created_at, search_tsv, search_pairs)
      SELECT b.id, b.body, b.author_id, b.guest_number, b.guest_label, b.created_at, b.tsv, coalesce(p.arr, '{}')
      FROM batch b LEFT JOIN pairs p ON p.ord = b.ord
      ORDER BY b.ord
      RETURNING m.id, m.seq, m.author_id, m.guest_number
    ), points AS (
      INSERT INTO point_events (identity_id, guest_number, kind, points, ref)
      SELECT w.author_id, CASE WHEN w.author_id IS NULL THEN w.guest_number END, 'chat_message', 1, w.id::text
      FROM written w
    )
    SELECT w.id, w.seq, coalesce(v_items -> w.id::text, '[]'::jsonb) FROM written w;
END
$$;
