-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION deposits_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'deposits are kept' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF OLD.state IN ('verified', 'rejected') THEN
    RAISE EXCEPTION 'a % deposit is final', OLD.state USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF NEW.tx_hash <> OLD.tx_hash OR NEW.asset <> OLD.asset OR NEW.on_behalf_of IS DISTINCT FROM OLD.on_behalf_of
     OR NEW.campaign_id IS DISTINCT FROM OLD.campaign_id THEN
    RAISE EXCEPTION 'a deposit''s hash, asset, beneficiary and campaign are fixed' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
