-- A group of chat posts appended in one statement (issue 36; DESIGN.md "Writes are grouped"): only
-- what ordering and durability need. Each member's post is written only if the hash of the token
-- it was sent with (read from the node's token cache) still names its author, so a token rotated
-- or revoked on any node is refused by the write itself (DECISIONS.md "Reliability promises"); a
-- refused row is not returned (the caller answers 401). A guest's row is created on its first
-- write (DECISIONS.md "Guest issuance"); its label is written only when it changed, so a guest's
-- row is not locked by every post. The messages take their seq in array order under the chat lock
-- (7262003, src/store/chat.ts), held to the commit, so seq order is commit order on every node:
-- the stream's no-gap replay and the indexer's cursor rest on it. The lock covers the insert of
-- the rows and the commit only: the token check and the guests come before it, and what is derived
-- from a message (search columns, point and score, mention items) is written after the commit by
-- chat_index_next. p_mentions[i] is the comma-separated list of members message i mentions (parsed
-- once by the writer), or NULL.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION chat_append(
  p_ids uuid[], p_bodies text[], p_authors bigint[], p_token_hashes text[], p_guests bigint[], p_labels text[],
  p_ats timestamptz[], p_guest_numbers bigint[], p_guest_labels text[], p_mentions text[]
) RETURNS TABLE (id uuid, seq bigint) LANGUAGE plpgsql AS $$
DECLARE
  v_refused uuid[];
BEGIN
  SELECT coalesce(array_agg(u.mid), '{}') INTO v_refused
    FROM unnest(p_ids, p_authors, p_token_hashes) AS u(mid, author_id, token_hash)
    WHERE u.token_hash IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM identities i WHERE i.id = u.author_id AND i.token_hash = decode(u.token_hash, 'hex'));
  IF cardinality(p_guest_numbers) > 0 THEN
    INSERT INTO guests (number, label)
      SELECT * FROM unnest(p_guest_numbers, p_guest_labels) ORDER BY 1
      ON CONFLICT (number) DO NOTHING;
    UPDATE guests g SET label = u.label
      FROM unnest(p_guest_numbers, p_guest_labels) AS u(number, label)
      WHERE g.number = u.number AND u.label IS NOT NULL AND g.label IS DISTINCT FROM u.label;
  END IF;
  PERFORM pg_advisory_xact_lock(7262003);
  RETURN QUERY
    INSERT INTO chat_messages AS m (id, body, author_id, guest_number, guest_label, created_at, mentions)
    SELECT u.id, u.body, u.author_id, u.guest_number, u.guest_label, u.created_at,
      CASE WHEN u.mentions IS NOT NULL THEN string_to_array(u.mentions, ',')::bigint[] END
    FROM unnest(p_ids, p_bodies, p_authors, p_guests, p_labels, p_ats, p_mentions)
      WITH ORDINALITY AS u(id, body, author_id, guest_number, guest_label, created_at, mentions, ord)
    WHERE NOT (u.id = ANY(v_refused))
    ORDER BY u.ord
    RETURNING m.id, m.seq;
END
$$;
