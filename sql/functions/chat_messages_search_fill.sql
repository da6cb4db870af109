-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION chat_messages_search_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' OR NEW.search_tsv IS NULL OR NEW.search_pairs IS NULL THEN
    NEW.search_tsv := to_tsvector('simple'::regconfig, NEW.body);
    NEW.search_pairs := commons_pairs(NEW.search_tsv);
  END IF;
  RETURN NEW;
END
$$;
