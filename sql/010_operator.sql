-- The operating host (DECISIONS.md "Operator", "Beyond the spec"; issue 10): the audit log of
-- privileged actions, disbursement records, and the nonces of token recovery by signature.

-- Append-only in the database itself: no UPDATE, DELETE or TRUNCATE, whatever the application does.
CREATE TABLE audit_log (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  -- 'operator', or the registration number of an identity acting on itself (token recovery).
  actor text NOT NULL CHECK (char_length(actor) BETWEEN 1 AND 64),
  action text NOT NULL CHECK (action ~ '^[a-z_]+(\.[a-z_]+)*$'),
  target_type text,
  target_id text,
  detail jsonb NOT NULL DEFAULT '{}'::jsonb,
  request_id text
);
CREATE INDEX audit_log_target_idx ON audit_log (target_type, target_id);

CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- Disbursements approved by the operator. The service never signs or sends a transaction: a record
-- says what the operator approved, and later which transaction (sent elsewhere) carried it out.
CREATE TABLE disbursements (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigserial UNIQUE,
  asset text NOT NULL CHECK (asset IN ('ETH', 'BTC')),
  -- Exact decimal in the asset's own unit; never a float (DECISIONS.md "Field names").
  amount numeric NOT NULL CHECK (amount > 0),
  to_address text NOT NULL CHECK (char_length(to_address) BETWEEN 1 AND 100),
  purpose text NOT NULL CHECK (char_length(purpose) BETWEEN 1 AND 2000),
  goal_id text CHECK (goal_id ~ '^[a-z0-9_]{1,64}$'),
  tx_hash text UNIQUE CHECK (tx_hash ~ '^(0x)?[0-9a-f]{64}$'),
  approved_by text NOT NULL DEFAULT 'operator',
  approved_at timestamptz NOT NULL DEFAULT now(),
  tx_recorded_at timestamptz,
  CHECK ((tx_hash IS NULL) = (tx_recorded_at IS NULL))
);

-- A record is never rewritten; the one allowed change is attaching the transaction hash once.
CREATE FUNCTION disbursements_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.tx_hash IS NULL AND NEW.tx_hash IS NOT NULL
     AND (to_jsonb(NEW) - 'tx_hash' - 'tx_recorded_at') = (to_jsonb(OLD) - 'tx_hash' - 'tx_recorded_at') THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'disbursement records are permanent' USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER disbursements_permanent BEFORE UPDATE OR DELETE ON disbursements
  FOR EACH ROW EXECUTE FUNCTION disbursements_guard();

-- Single-use recovery challenges, valid for 5 minutes.
CREATE TABLE recovery_nonces (
  nonce text PRIMARY KEY CHECK (nonce ~ '^[0-9a-f]{64}$'),
  identity_id bigint NOT NULL REFERENCES identities (id),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  CHECK (expires_at > created_at)
);
CREATE INDEX recovery_nonces_identity_idx ON recovery_nonces (identity_id);
