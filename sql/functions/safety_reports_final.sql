-- A resolved report is never resolved again or rewritten, whatever the application does.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION safety_reports_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.resolution IS NOT NULL THEN
    RAISE EXCEPTION 'safety report % is already resolved', OLD.id USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
