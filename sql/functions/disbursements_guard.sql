-- A record is never rewritten; the one allowed change is attaching the transaction hash once.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION disbursements_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.tx_hash IS NULL AND NEW.tx_hash IS NOT NULL
     AND (to_jsonb(NEW) - 'tx_hash' - 'tx_recorded_at') = (to_jsonb(OLD) - 'tx_hash' - 'tx_recorded_at') THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'disbursement records are permanent' USING ERRCODE = 'insufficient_privilege';
END;
$$;
