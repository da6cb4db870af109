-- A chat message's search columns in a table of their own (issue 36; docs/chat.md "Indexing").
-- The indexer (chat_index_next) wrote them by rewriting the message row: a new version of the whole
-- row, with an entry in each of its b-tree indexes as well as the two GIN indexes (no HOT update, as
-- the columns it changed are indexed), about 3.8 times what the post's own insert costs. It now
-- inserts a narrow row here instead (seq, id, created_at, the vector and the word pairs): one
-- b-tree entry and the two GIN indexes' entries. Search reads this table alone (src/store/search.ts).
-- Only visible messages have a row: hiding a message deletes its row (the trigger below), and the
-- hide takes the indexer's cursor lock first (src/domain/moderation.ts), so a step indexing that
-- message either commits before the hide reads it, and its row is deleted, or runs after the hide
-- and skips it. A body changed in place (no API path does it) has its row refreshed by the trigger.
CREATE TABLE chat_search (
  seq bigint PRIMARY KEY,
  id uuid NOT NULL,
  created_at timestamptz NOT NULL,
  search_tsv tsvector NOT NULL,
  search_pairs text[] NOT NULL
);
INSERT INTO chat_search (seq, id, created_at, search_tsv, search_pairs)
  SELECT m.seq, m.id, m.created_at, m.search_tsv, coalesce(m.search_pairs, '{}')
  FROM chat_messages m
  WHERE m.hidden_at IS NULL AND m.search_tsv IS NOT NULL AND m.seq <= (SELECT indexed_seq FROM chat_index);
-- The short pending list of sql/023, for the same reason.
CREATE INDEX chat_search_tsv_idx ON chat_search USING gin (search_tsv) WITH (gin_pending_list_limit = 256);
CREATE INDEX chat_search_pairs_idx ON chat_search USING gin (search_pairs) WITH (gin_pending_list_limit = 256);

-- The trigger that kept the row's own columns now keeps its chat_search row (its function's live
-- definition: sql/functions/chat_messages_search_fill.sql, applied after this migration).
DROP TRIGGER chat_messages_search_fill ON chat_messages;
CREATE TRIGGER chat_messages_search_fill AFTER UPDATE OF body, hidden_at ON chat_messages
  FOR EACH ROW EXECUTE FUNCTION chat_messages_search_fill();

-- The row's own columns stay, no longer written, for the previous release's searches during a
-- rolling upgrade (docs/operations.md "Upgrades": a migration drops only what the previous release
-- no longer reads): its nodes find the messages indexed before the upgrade until they are
-- replaced; the release after this one drops the columns. Their indexes leave out the rows
-- without a vector, so a new message adds no entry to them: a search's `search_tsv @@ q` implies
-- `search_tsv IS NOT NULL` (the operator is strict), so the old search still uses them.
DROP INDEX chat_messages_search_idx;
DROP INDEX chat_messages_pairs_idx;
CREATE INDEX chat_messages_search_idx ON chat_messages USING gin (search_tsv) WITH (gin_pending_list_limit = 256)
  WHERE hidden_at IS NULL AND search_tsv IS NOT NULL;
CREATE INDEX chat_messages_pairs_idx ON chat_messages USING gin (search_pairs) WITH (gin_pending_list_limit = 256)
  WHERE hidden_at IS NULL AND search_pairs IS NOT NULL;
