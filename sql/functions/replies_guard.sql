-- Replies are kept permanently: no update or delete path, enforced here. The one exception is
-- the operator hiding a reply found unsafe (hidden_at), which keeps the row.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION replies_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.hidden_at IS NULL AND NEW.hidden_at IS NOT NULL
     AND (to_jsonb(NEW) - 'hidden_at') = (to_jsonb(OLD) - 'hidden_at') THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'replies are permanent' USING ERRCODE = 'insufficient_privilege';
END;
$$;
