-- The chat's watermark (issue 47; docs/chat.md "The watermark"): the highest seq at or below which
-- every message is committed or will never exist. Every reader of chat in seq order after a cursor
-- stops at it (the indexer's step, the node's chat room and with it the stream's replay), so a
-- group that commits before a lower one, on this node or another, is not read past the lower one.
--
-- How writers announce themselves (chat_append): a group takes, in its own transaction, a shared
-- lock on the "drawing" key (7262004, tag) before it draws its first seq, then an exclusive lock
-- on its range's key chat_group_key(first seq) once drawn. PostgreSQL releases a transaction's
-- locks only after its commit is flushed and visible (or after its rollback), so a range key held
-- is a group in flight, and a holder of the drawing key without a range key is a group between its
-- draw and its announcement (a few microseconds: no wait there). The watermark is read as:
--   1. the sequence's last value L (drawn so far, committed or not; not transactional),
--   2. then one snapshot of the advisory locks (pg_locks: every partition locked at once, so the
--      advisory locks are read at one instant);
--   3. a group between draw and announcement: read again; else min(L, lowest first seq in flight - 1).
-- Why it holds: a seq s <= L was drawn before (1); its group, at (2), had ended (committed:
-- visible to any later snapshot; rolled back: s never exists), or held the drawing key (taken
-- before the draw) and, announced, a range key <= s, or, not yet, is seen in the window and read again.
-- The reader must take its snapshot after this returns (a later statement; READ COMMITTED gives each
-- statement of a plpgsql function its own), never in the statement that calls it.
--
-- tag: the low 16 bits of the sequence's oid, so the chat of another schema in the same database
-- (bench and test schemas) is told apart; a clash only lowers the watermark for a moment.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION chat_watermark() RETURNS bigint LANGUAGE sql AS $$
  SELECT least(w.last, w.first - 1) FROM chat_watermark_parts() w
$$;
