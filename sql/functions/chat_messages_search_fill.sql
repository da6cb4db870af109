-- Keeps a chat message's chat_search row (sql/033_chat_search.sql) with the message, after an
-- UPDATE of its body or hidden_at: a hidden message's row is deleted (hidden content is never
-- found); a body changed in place (no API path does it) has its vector and pairs computed again.
-- A message not yet indexed has no row, and the indexer reads it as it is then.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION chat_messages_search_fill() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v tsvector;
BEGIN
  IF NEW.hidden_at IS NOT NULL THEN
    DELETE FROM chat_search s WHERE s.seq = NEW.seq;
  ELSIF NEW.body IS DISTINCT FROM OLD.body THEN
    v := to_tsvector('simple'::regconfig, NEW.body);
    UPDATE chat_search s SET search_tsv = v, search_pairs = commons_pairs(v) WHERE s.seq = NEW.seq;
  END IF;
  RETURN NULL;
END
$$;
