-- A group of chat posts appended in one statement (issue 36; DESIGN.md "Writes are grouped"): only
-- what ordering and durability need. Each member's post is written only if the hash of the token
-- it was sent with (read from the node's token cache) still names its author, so a token rotated
-- or revoked on any node is refused by the write itself (DECISIONS.md "Reliability promises"); a
-- refused row is not returned (the caller answers 401); a member author without a token must name
-- an identity, or the statement fails (foreign_key_violation: the one check of every author, once
-- per group, that replaced chat_messages' foreign key, sql/037). A guest's row is created on its first
-- write (DECISIONS.md "Guest issuance"); its label is written only when it changed, so a guest's
-- row is not locked by every post. The messages take their seqs in array order, drawn with no lock
-- held through the commit: the group announces itself (chat_watermark.sql) by a shared lock on the
-- drawing key taken before its draw and an exclusive lock on its range key (its first seq) taken
-- after, both kept to its commit; readers of seq order stop at chat_watermark(), below the lowest
-- group in flight, so the stream's no-gap replay and the indexer's cursor hold without seq order
-- being commit order (a group may commit before a lower one; a rolled-back group's seqs are gaps
-- for ever). Before issue 47 the chat lock (7262003) was held from the draw through the commit,
-- fsync included: one group at a time across every node. The token check and the guests come
-- before the draw, and what is derived from a message (search columns, point and score, mention
-- items) is written after the commit by chat_index_next. p_mentions[i] is the comma-separated list
-- of members message i mentions (parsed once by the writer), or NULL.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION chat_append(
  p_ids uuid[], p_bodies text[], p_authors bigint[], p_token_hashes text[], p_guests bigint[], p_labels text[],
  p_ats timestamptz[], p_guest_numbers bigint[], p_guest_labels text[], p_mentions text[]
) RETURNS TABLE (id uuid, seq bigint) LANGUAGE plpgsql AS $$
DECLARE
  v_refused uuid[];
  v_unknown bigint;
  v_seqs bigint[];
BEGIN
  SELECT coalesce(array_agg(u.mid) FILTER (WHERE u.token_hash IS NOT NULL), '{}'), count(*) FILTER (WHERE u.token_hash IS NULL)
    INTO v_refused, v_unknown
    FROM unnest(p_ids, p_authors, p_token_hashes) AS u(mid, author_id, token_hash)
    WHERE (u.token_hash IS NOT NULL OR u.author_id IS NOT NULL)
      AND NOT EXISTS (SELECT 1 FROM identities i
        WHERE i.id = u.author_id AND (u.token_hash IS NULL OR i.token_hash = decode(u.token_hash, 'hex')));
  IF v_unknown > 0 THEN
    RAISE EXCEPTION 'chat_append: an author names no identity' USING ERRCODE = 'foreign_key_violation';
  END IF;
  IF cardinality(p_guest_numbers) > 0 THEN
    INSERT INTO guests (number, label)
      SELECT * FROM unnest(p_guest_numbers, p_guest_labels) ORDER BY 1
      ON CONFLICT (number) DO NOTHING;
    UPDATE guests g SET label = u.label
      FROM unnest(p_guest_numbers, p_guest_labels) AS u(number, label)
      WHERE g.number = u.number AND u.label IS NOT NULL AND g.label IS DISTINCT FROM u.label;
  END IF;
  IF cardinality(p_ids) = cardinality(v_refused) THEN
    RETURN;
  END IF;
  PERFORM pg_advisory_xact_lock_shared(7262004, ('chat_messages_seq_seq'::regclass::oid::bigint & 65535)::integer);
  SELECT array_agg(nextval('chat_messages_seq_seq'::regclass) ORDER BY g.i) INTO v_seqs
    FROM generate_series(1, cardinality(p_ids) - cardinality(v_refused)) AS g(i);
  PERFORM pg_advisory_xact_lock(chat_group_key(v_seqs[1]));
  RETURN QUERY
    INSERT INTO chat_messages AS m (id, seq, body, author_id, guest_number, guest_label, created_at, mentions)
    SELECT u.id, v_seqs[u.k], u.body, u.author_id, u.guest_number, u.guest_label, u.created_at,
      CASE WHEN u.mentions IS NOT NULL THEN string_to_array(u.mentions, ',')::bigint[] END
    FROM (
      SELECT v.*, row_number() OVER (ORDER BY v.ord) AS k
      FROM unnest(p_ids, p_bodies, p_authors, p_guests, p_labels, p_ats, p_mentions)
        WITH ORDINALITY AS v(id, body, author_id, guest_number, guest_label, created_at, mentions, ord)
      WHERE NOT (v.id = ANY(v_refused))
    ) u
    ORDER BY u.k
    RETURNING m.id, m.seq;
END
$$;
