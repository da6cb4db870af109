-- Chat posts verify their member token in the same statement (DESIGN.md "Writes are grouped"):
-- a member's post may carry the hash (hex) of the token it was sent with, read from the node's token
-- cache instead of the database; the row is written only if that hash is still the member's
-- token, in the statement that writes it, so a token rotated or revoked on any node is refused by
-- the write itself (DECISIONS.md "Reliability promises") and the check costs no round trip of its
-- own. A refused row is not returned (the caller answers 401) and earns no point.
DROP FUNCTION chat_post(uuid[], text[], bigint[], bigint[], text[], timestamptz[], bigint[], text[]);

CREATE FUNCTION chat_post(
  p_ids uuid[], p_bodies text[], p_authors bigint[], p_token_hashes text[], p_guests bigint[], p_labels text[],
  p_ats timestamptz[], p_guest_numbers bigint[], p_guest_labels text[]
) RETURNS TABLE (id uuid, seq bigint) LANGUAGE plpgsql AS $$
BEGIN
  -- A guest's row is created on its first write (DECISIONS.md "Guest issuance").
  INSERT INTO guests (number, label)
    SELECT * FROM unnest(p_guest_numbers, p_guest_labels)
    ON CONFLICT (number) DO UPDATE SET label = COALESCE(EXCLUDED.label, guests.label);
  PERFORM pg_advisory_xact_lock(7262003);
  RETURN QUERY
    WITH written AS (
      INSERT INTO chat_messages AS m (id, body, author_id, guest_number, guest_label, created_at)
      SELECT u.id, u.body, u.author_id, u.guest_number, u.guest_label, u.created_at
      FROM unnest(p_ids, p_bodies, p_authors, p_token_hashes, p_guests, p_labels, p_ats)
        WITH ORDINALITY AS u(id, body, author_id, token_hash, guest_number, guest_label, created_at, ord)
      WHERE u.token_hash IS NULL
         OR EXISTS (SELECT 1 FROM identities i WHERE i.id = u.author_id AND i.token_hash = decode(u.token_hash, 'hex'))
      ORDER BY u.ord
      RETURNING m.id, m.seq, m.author_id, m.guest_number
    ), points AS (
      INSERT INTO point_events (identity_id, guest_number, kind, points, ref)
      SELECT w.author_id, CASE WHEN w.author_id IS NULL THEN w.guest_number END, 'chat_message', 1, w.id::text
      FROM written w
    )
    SELECT w.id, w.seq FROM written w;
END
$$;
