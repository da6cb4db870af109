-- Campaigns that raise, count and finish (docs/treasury.md "Campaigns"). A campaign is open until
-- verified deposits naming it reach its target (funded), its ends_at passes (ended, kept by the
-- deadline pass: src/domain/campaign-deadlines.ts) or its opener or the operator closes it (closed).
-- Raised amounts are exact base units (wei / satoshi), counted in the transaction that verifies a
-- deposit (src/domain/verification.ts).
ALTER TABLE funding_campaigns RENAME COLUMN status TO state;
ALTER TABLE funding_campaigns DROP CONSTRAINT funding_campaigns_status_check;
DROP INDEX funding_campaigns_active_idx;
UPDATE funding_campaigns SET state = 'open' WHERE state = 'active';
ALTER TABLE funding_campaigns ALTER COLUMN state SET DEFAULT 'open';
ALTER TABLE funding_campaigns
  ADD COLUMN raised_base numeric(78, 0) NOT NULL DEFAULT 0 CHECK (raised_base >= 0),
  ADD COLUMN contributions integer NOT NULL DEFAULT 0 CHECK (contributions >= 0),
  ADD COLUMN ends_at timestamptz,
  ADD COLUMN finished_at timestamptz,
  -- A registration number, or 'operator', for a closed campaign.
  ADD COLUMN closed_by text;
UPDATE funding_campaigns SET finished_at = created_at WHERE state = 'closed';
ALTER TABLE funding_campaigns
  ADD CONSTRAINT funding_campaigns_state_check CHECK (state IN ('open', 'funded', 'ended', 'closed')),
  ADD CONSTRAINT funding_campaigns_finished_check CHECK ((state = 'open') = (finished_at IS NULL));
CREATE INDEX funding_campaigns_seq_idx ON funding_campaigns (seq DESC) WHERE hidden_at IS NULL;
CREATE INDEX funding_campaigns_opener_idx ON funding_campaigns (opened_by) WHERE state = 'open';
CREATE INDEX funding_campaigns_due_idx ON funding_campaigns (ends_at) WHERE state = 'open' AND ends_at IS NOT NULL;

-- The campaign a deposit was reported for, fixed like its hash and beneficiary.
ALTER TABLE deposits ADD COLUMN campaign_id uuid REFERENCES funding_campaigns (id);
CREATE INDEX deposits_campaign_pending_idx ON deposits (campaign_id) WHERE state IN ('submitted', 'verifying');

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

ALTER TABLE inbox_items DROP CONSTRAINT inbox_items_kind_check;
ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_kind_check
  CHECK (kind IN ('mention', 'reply', 'task', 'vote', 'dm', 'deposit', 'badge', 'webhook_disabled', 'campaign'));
