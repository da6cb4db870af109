-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION point_events_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.identity_id IS NULL AND NEW.identity_id IS NOT NULL
     AND NEW.guest_number IS NOT DISTINCT FROM OLD.guest_number AND NEW.kind = OLD.kind
     AND NEW.points = OLD.points AND NEW.ref IS NOT DISTINCT FROM OLD.ref
     AND NEW.created_at = OLD.created_at THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'point_events is append-only' USING ERRCODE = 'insufficient_privilege';
END;
$$;
