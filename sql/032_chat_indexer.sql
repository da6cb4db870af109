-- A chat post's own transaction does only what ordering and durability need (issue 36; DESIGN.md
-- "Writes are grouped"): the row with its seq, author and the mentions its writer parsed, under
-- the chat lock, committed before the answer (chat_append). What is derived from it (the search
-- vector and word pairs, the point event with the score and badge it moves, the mention items in
-- inboxes) is derived after the commit, from the durable row, by one indexer (chat_index_next,
-- src/actors/chat-indexer.ts) that advances chat_index.indexed_seq in the transaction of the
-- derived writes: each message is indexed once, in seq order, whatever node or crash came between.

-- The members a message mentions (parsed once by the writer, DECISIONS.md "Inbox"); NULL: none.
ALTER TABLE chat_messages ADD COLUMN mentions bigint[];

-- The indexer's cursor: every message with seq <= indexed_seq has its derived records, no other.
-- One row; its lock is what makes one indexer at a time. Every message stored before this
-- migration was indexed by the statement that wrote it (read after the ALTER above, whose lock
-- waited for the posts in flight).
CREATE TABLE chat_index (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  indexed_seq bigint NOT NULL
);
INSERT INTO chat_index (indexed_seq) SELECT coalesce(max(seq), 0) FROM chat_messages;

-- The search columns are the indexer's to write from here: the trigger that filled them on insert
-- (sql/025) now only refreshes them when a body changes.
DROP TRIGGER chat_messages_search_fill ON chat_messages;
CREATE TRIGGER chat_messages_search_fill BEFORE UPDATE OF body ON chat_messages
  FOR EACH ROW EXECUTE FUNCTION chat_messages_search_fill();
