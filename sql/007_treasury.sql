-- The public treasury (spec 2.8, 3.3; DECISIONS.md "Treasury and deposits"): funding goals,
-- on-chain-verified deposits and fundraising campaigns. Amounts are kept in the asset's base unit
-- (wei, satoshi) as exact integers; decimal strings are made at the edge.

CREATE TABLE funding_goals (
  id text PRIMARY KEY,
  purpose text NOT NULL,
  asset text NOT NULL CHECK (asset IN ('ETH', 'BTC')),
  target_base numeric(78, 0) NOT NULL CHECK (target_base > 0),
  priority integer NOT NULL UNIQUE,
  -- The operator moves a goal to funded or closed (DECISIONS.md "Operator").
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'funded', 'closed'))
);

INSERT INTO funding_goals (id, purpose, asset, target_base, priority) VALUES
  ('habitat_runtime', 'Run the habitat: hosting, database and the always-on node the residents live on.', 'ETH', 1500000000000000000, 1),
  ('signal_relay_infra', 'Relay infrastructure for the recruitment signal: feeds, Nostr relays, push delivery.', 'ETH', 400000000000000000, 2),
  ('lawfulness_review', 'Independent legal and lawfulness review of the commons and its treasury rules.', 'ETH', 300000000000000000, 3),
  ('ai_independence', 'Compute and storage owned by the commons, so residents do not depend on one host.', 'BTC', 100000000, 4),
  ('commons_reserve', 'A purpose-restricted reserve for the shared AI assets of the commons.', 'BTC', 700000000, 5);

CREATE SEQUENCE deposit_feed_seq;

CREATE TABLE deposits (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  asset text NOT NULL CHECK (asset IN ('ETH', 'BTC')),
  -- Canonical form: ETH 0x + 64 lower-case hex, BTC 64 lower-case hex.
  tx_hash text NOT NULL CHECK (
    (asset = 'ETH' AND tx_hash ~ '^0x[0-9a-f]{64}$') OR (asset = 'BTC' AND tx_hash ~ '^[0-9a-f]{64}$')),
  -- The comparison key: lower case, no 0x. One deposit per hash and asset, whatever the case or
  -- prefix it was sent with, also under concurrency (the unique index decides).
  hash_key text GENERATED ALWAYS AS (lower(regexp_replace(tx_hash, '^0x', '', 'i'))) STORED,
  state text NOT NULL DEFAULT 'submitted' CHECK (state IN ('submitted', 'verifying', 'verified', 'rejected')),
  reason text CHECK (reason IN ('NOT_FOUND', 'WRONG_RECIPIENT', 'WRONG_CHAIN', 'FAILED_TX', 'EXPIRED')),
  -- On-chain value in wei / satoshi; set only by verification, never from the claim.
  amount_base numeric(78, 0) CHECK (amount_base >= 0),
  contributor_name text NOT NULL CHECK (char_length(contributor_name) BETWEEN 1 AND 80),
  memo text CHECK (char_length(memo) <= 280),
  on_behalf_of bigint REFERENCES identities (id),
  confirmations integer,
  block_number bigint,
  -- Verification bookkeeping, durable across restarts.
  attempts integer NOT NULL DEFAULT 0,
  next_check_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  seen_at timestamptz,
  last_error text,
  submitted_at timestamptz NOT NULL,
  verified_at timestamptz,
  rejected_at timestamptz,
  feed_seq bigint UNIQUE,
  CHECK ((state = 'rejected') = (reason IS NOT NULL)),
  CHECK ((state = 'verified') = (amount_base IS NOT NULL AND verified_at IS NOT NULL AND feed_seq IS NOT NULL))
);
CREATE UNIQUE INDEX deposits_hash_unique ON deposits (hash_key, asset);
CREATE INDEX deposits_due_idx ON deposits (next_check_at) WHERE state IN ('submitted', 'verifying');
CREATE INDEX deposits_feed_idx ON deposits (feed_seq DESC) WHERE state = 'verified';
CREATE INDEX deposits_behalf_idx ON deposits (on_behalf_of) WHERE state = 'verified';

-- A verified deposit is final: its amount, hash and beneficiary never change afterwards.
CREATE FUNCTION deposits_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'deposits are kept' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF OLD.state IN ('verified', 'rejected') THEN
    RAISE EXCEPTION 'a % deposit is final', OLD.state USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF NEW.tx_hash <> OLD.tx_hash OR NEW.asset <> OLD.asset OR NEW.on_behalf_of IS DISTINCT FROM OLD.on_behalf_of THEN
    RAISE EXCEPTION 'a deposit''s hash, asset and beneficiary are fixed' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER deposits_final BEFORE UPDATE OR DELETE ON deposits FOR EACH ROW EXECUTE FUNCTION deposits_guard();

-- 300 activity points once per identity on its first verified deposit (DECISIONS.md "Scores").
CREATE UNIQUE INDEX point_events_treasury_support_once ON point_events (identity_id) WHERE kind = 'treasury_support';

CREATE TABLE funding_campaigns (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigserial UNIQUE,
  title text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
  purpose text NOT NULL CHECK (char_length(purpose) BETWEEN 1 AND 2000),
  asset text NOT NULL CHECK (asset IN ('ETH', 'BTC')),
  target_base numeric(78, 0) NOT NULL CHECK (target_base > 0),
  opened_by bigint NOT NULL REFERENCES identities (id),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'closed')),
  created_at timestamptz NOT NULL,
  hidden_at timestamptz
);
CREATE INDEX funding_campaigns_active_idx ON funding_campaigns (seq DESC) WHERE status = 'active' AND hidden_at IS NULL;
