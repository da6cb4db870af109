-- A chat post's author and a point's owner are checked once per statement, not row by row
-- (issue 47; docs/bench-chat-47.md "Third round"). The foreign keys of chat_messages.author_id and
-- point_events.identity_id ran one check per inserted row: a query of its own (its executor set up
-- and torn down each time) that also locked the identity's row (FOR KEY SHARE), about 32,000
-- instructions a row, 28% of what appending a group of 100 posts costs PostgreSQL and as much again
-- in the indexer's step, which writes a point per message. Every row still names an identity:
-- - chat_messages: only chat_append writes chat messages (docs/chat.md, the watermark depends on it
--   already), and it now checks every member author of its group in the one query that checked
--   the tokens (sql/functions/chat_append.sql), refusing the statement with foreign_key_violation as
--   the key did; a guest's row takes an identity only through the carry-over, which names the
--   identity it has just written (src/store/identities.ts mergeGuest).
-- - point_events: an event's identity_id is written by an insert, whose statement trigger creates
--   the identity's identity_scores row when it has none (sql/functions/identity_scores_apply_inserted.sql),
--   or by the carry-over's update from NULL (the only update point_events_guard lets through), whose
--   row trigger does the same (identity_scores_apply.sql); identity_scores.identity_id keeps its
--   foreign key, checked once per identity new to the scores. So an event naming no identity still
--   fails (23503), and an identity with events cannot be deleted while its scores row names it.
-- No identity is ever deleted (no path of the service deletes one).
ALTER TABLE chat_messages DROP CONSTRAINT chat_messages_author_id_fkey;
ALTER TABLE point_events DROP CONSTRAINT point_events_identity_id_fkey;
