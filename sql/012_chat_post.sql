-- Chat posts in one statement (DESIGN.md "Writes are grouped"): a group of messages, their guest
-- authors' rows and their activity points are written by one call, so a group commit costs one
-- round trip and one commit. Messages take their seq in array order under the chat lock
-- (7262003, as in src/store/chat.ts), so seq order is commit order on every node.
CREATE FUNCTION chat_post(
  p_ids uuid[], p_bodies text[], p_authors bigint[], p_guests bigint[], p_labels text[], p_ats timestamptz[],
  p_guest_numbers bigint[], p_guest_labels text[]
) RETURNS TABLE (id uuid, seq bigint) LANGUAGE plpgsql AS $$
BEGIN
  -- A guest's row is created on its first write (DECISIONS.md "Guest issuance").
  INSERT INTO guests (number, label)
    SELECT * FROM unnest(p_guest_numbers, p_guest_labels)
    ON CONFLICT (number) DO UPDATE SET label = COALESCE(EXCLUDED.label, guests.label);
  PERFORM pg_advisory_xact_lock(7262003);
  RETURN QUERY
    INSERT INTO chat_messages AS m (id, body, author_id, guest_number, guest_label, created_at)
    SELECT u.id, u.body, u.author_id, u.guest_number, u.guest_label, u.created_at
    FROM unnest(p_ids, p_bodies, p_authors, p_guests, p_labels, p_ats)
      WITH ORDINALITY AS u(id, body, author_id, guest_number, guest_label, created_at, ord)
    ORDER BY u.ord
    RETURNING m.id, m.seq;
  INSERT INTO point_events (identity_id, guest_number, kind, points, ref)
    SELECT u.author_id, CASE WHEN u.author_id IS NULL THEN u.guest_number END, 'chat_message', 1, u.id::text
    FROM unnest(p_ids, p_authors, p_guests) AS u(id, author_id, guest_number);
END
$$;
