-- The chat indexer's step (issue 36; src/actors/chat-indexer.ts): derives, from the durable rows,
-- what a chat post causes, for the next messages after the cursor (at most p_limit), in seq order,
-- in one statement and so one transaction with the cursor's advance: a message is indexed exactly
-- once, whatever node runs the step and whenever one dies (a step that does not commit leaves the
-- cursor where it was, and the next step does the same messages again).
-- - The cursor row is locked first: two nodes' steps run one after the other, the second reading
--   the cursor the first committed (READ COMMITTED re-reads a row it waited for).
-- - It reads only up to the watermark (chat_watermark.sql), computed after the cursor's lock and
--   before the read's snapshot: every seq at or below it is committed (so visible to the read) or
--   will never exist, so reading cursor < seq <= watermark in order skips nothing, though groups
--   commit in any order (chat_append); what a group in flight holds is read by a later step.
-- - Guests' rows are locked (FOR SHARE) before their messages' points are written: a guest
--   registering meanwhile (the carry-over, src/store/identities.ts mergeGuest, which locks the
--   row) either commits first, and the point goes to the identity it was merged into, or waits,
--   and carries this point over with the others.
-- - A message hidden before its step is neither made searchable nor announced to the members it
--   names: the hide takes the cursor lock before it hides (src/domain/moderation.ts), so it
--   commits before this step reads the messages, or waits for this step and then deletes what the
--   step wrote for it (its chat_search row by trigger, its inbox items).
-- Written per message: its search row in chat_search (vector and adjacent word pairs, as sql/025
-- computed them for a group; an insert of a narrow row, not a new version of the message's, see
-- sql/033_chat_search.sql), a `mention` item for each member it names (inbox counters locked in
-- owner order, so each member's items follow seq order), then its activity point (the score and
-- badge follow by trigger, sql/functions/identity_scores_apply_inserted.sql, in event order = seq
-- order; a hidden message's point is kept, as a post's always was). Inbox
-- counters before scores, as every other writer of both takes them (a comment's mentions, then its
-- author's point), so no two of them wait for each other in a cycle.
-- Returns the new cursor, how many messages were indexed, their created_at (ms since the epoch,
-- for the lag histogram) and the inbox items written (for the stream's `inbox` topic).
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION chat_index_next(p_limit integer, p_url text)
RETURNS TABLE (upto bigint, indexed integer, ats float8[], items jsonb) LANGUAGE plpgsql AS $$
DECLARE
  v_from bigint;
  v_to bigint;
  v_n integer;
  v_ats float8[];
  v_items jsonb;
  v_w bigint;
BEGIN
  SELECT c.indexed_seq INTO v_from FROM chat_index c FOR UPDATE;
  v_w := chat_watermark();
  SELECT max(m.seq), count(*)::integer, coalesce(array_agg(extract(epoch FROM m.created_at) * 1000 ORDER BY m.seq), '{}')
    INTO v_to, v_n, v_ats
    FROM (SELECT x.seq, x.created_at FROM chat_messages x WHERE x.seq > v_from AND x.seq <= v_w ORDER BY x.seq LIMIT p_limit) m;
  IF v_n = 0 THEN
    RETURN QUERY SELECT v_from, 0, '{}'::float8[], '[]'::jsonb;
    RETURN;
  END IF;
  PERFORM 1 FROM guests g
    WHERE g.number IN (SELECT x.guest_number FROM chat_messages x WHERE x.seq > v_from AND x.seq <= v_to AND x.guest_number IS NOT NULL)
    ORDER BY g.number FOR SHARE;
  WITH batch AS (
    SELECT x.seq, x.id, x.created_at, to_tsvector('simple'::regconfig, x.body) AS tsv
    FROM chat_messages x WHERE x.seq > v_from AND x.seq <= v_to AND x.hidden_at IS NULL
  ), words AS (
    SELECT b.seq, w.lexeme, unnest(w.positions) AS pos FROM batch b, unnest(b.tsv) AS w
  ), pairs AS (
    SELECT a.seq, array_agg(DISTINCT a.lexeme || ' ' || c.lexeme) AS arr
    FROM words a JOIN words c ON c.seq = a.seq AND c.pos = a.pos + 1
    GROUP BY a.seq
  )
  INSERT INTO chat_search (seq, id, created_at, search_tsv, search_pairs)
    SELECT b.seq, b.id, b.created_at, b.tsv, coalesce(p.arr, '{}')
    FROM batch b LEFT JOIN pairs p ON p.seq = b.seq
    ORDER BY b.seq;
  SELECT coalesce(jsonb_agg(a.item ORDER BY a.seq, a.owner), '[]'::jsonb) INTO v_items FROM (
    SELECT u.seq, u.owner, inbox_add(u.owner, 'mention',
        CASE WHEN u.guest_number IS NULL THEN commons_number(u.author_id)
             ELSE 'GUEST-' || lpad(u.guest_number::text, 8, '0') END,
        'chat_message', u.id::text, p_url, u.body) AS item
    FROM (
      SELECT x.seq, x.id, x.body, x.author_id, x.guest_number, t.owner
      FROM chat_messages x, unnest(x.mentions) AS t(owner)
      WHERE x.seq > v_from AND x.seq <= v_to AND x.mentions IS NOT NULL AND x.hidden_at IS NULL
      ORDER BY t.owner, x.seq
    ) u
  ) a WHERE a.item IS NOT NULL;
  INSERT INTO point_events (identity_id, guest_number, kind, points, ref)
    SELECT coalesce(x.author_id, g.merged_into), x.guest_number, 'chat_message', 1, x.id::text
    FROM chat_messages x LEFT JOIN guests g ON g.number = x.guest_number AND x.author_id IS NULL
    WHERE x.seq > v_from AND x.seq <= v_to
    ORDER BY x.seq;
  UPDATE chat_index SET indexed_seq = v_to;
  RETURN QUERY SELECT v_to, v_n, v_ats, v_items;
END
$$;
