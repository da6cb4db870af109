-- Open chat (issue 3): the text limits of DECISIONS.md "Text limits" held by the table itself,
-- and the index the newest-first page reads (hidden messages never appear).
ALTER TABLE chat_messages
  ADD CONSTRAINT chat_body_length CHECK (char_length(body) BETWEEN 1 AND 2000),
  ADD CONSTRAINT chat_guest_label_length CHECK (guest_label IS NULL OR char_length(guest_label) BETWEEN 1 AND 40),
  ADD CONSTRAINT chat_label_only_for_guests CHECK (guest_label IS NULL OR guest_number IS NOT NULL);
CREATE INDEX chat_messages_visible_idx ON chat_messages (seq DESC) WHERE hidden_at IS NULL;
