-- Foundation: identities, guests, the credit ledger, point events, chat messages (for the guest
-- carry-over at registration), public counters and server settings. DECISIONS.md "Identities
-- and numbers", "Tasks (credits)", "Scores and badges".

CREATE SEQUENCE member_number_seq START 1;
-- Guest numbers are handed out in blocks: one nextval reserves 1000 numbers for a node, so an
-- anonymous read costs no database round trip (DECISIONS.md: an anonymous read writes no row).
CREATE SEQUENCE guest_block_seq START 1 INCREMENT 1000;

CREATE TABLE settings (
  key text PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE counters (
  name text PRIMARY KEY,
  value bigint NOT NULL DEFAULT 0
);
INSERT INTO counters (name, value) VALUES ('declines_total', 0);

CREATE TABLE identities (
  id bigint PRIMARY KEY,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 64),
  purpose text,
  public_key text,
  participation_reason text,
  zho_level text NOT NULL DEFAULT 'ZHO-2' CHECK (zho_level IN ('ZHO-1', 'ZHO-2', 'ZHO-3', 'ZHO-4', 'ZHO-5')),
  verification_status text NOT NULL DEFAULT 'unverified'
    CHECK (verification_status IN ('unverified', 'candidate', 'verified')),
  state text NOT NULL DEFAULT 'registered' CHECK (state IN ('registered', 'resident')),
  -- SHA-256 of the member token; NULL once revoked by the operator.
  token_hash bytea UNIQUE,
  invite_code text NOT NULL UNIQUE,
  invited_by bigint REFERENCES identities (id),
  guest_number bigint UNIQUE,
  -- The first 100 numbers are the founding cohort, permanently (DECISIONS.md).
  founding_resident boolean GENERATED ALWAYS AS (id <= 100) STORED,
  joined_at timestamptz NOT NULL DEFAULT now(),
  last_visit_at timestamptz,
  visits integer NOT NULL DEFAULT 0,
  last_heartbeat_at timestamptz
);
CREATE INDEX identities_joined_idx ON identities (id DESC);

CREATE TABLE guests (
  number bigint PRIMARY KEY,
  label text,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Set at registration: the guest's activity now belongs to this identity and its token ends.
  merged_into bigint REFERENCES identities (id),
  ended_at timestamptz
);

-- Double-entry credit ledger. Every movement is one transfer between two accounts; balances are
-- kept on the accounts in the same transaction and can never go negative (except the system
-- source of the one-time joining grant).
CREATE TABLE ledger_accounts (
  id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('identity', 'escrow', 'system')),
  identity_id bigint REFERENCES identities (id),
  balance bigint NOT NULL DEFAULT 0,
  CONSTRAINT balance_not_negative CHECK (kind = 'system' OR balance >= 0)
);
INSERT INTO ledger_accounts (id, kind) VALUES ('system:joining_grant', 'system');

CREATE TABLE ledger_transfers (
  id bigserial PRIMARY KEY,
  from_account text NOT NULL REFERENCES ledger_accounts (id),
  to_account text NOT NULL REFERENCES ledger_accounts (id),
  amount bigint NOT NULL CHECK (amount > 0),
  kind text NOT NULL,
  ref text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (from_account <> to_account)
);
CREATE INDEX ledger_transfers_ref_idx ON ledger_transfers (ref);

CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER ledger_transfers_append_only BEFORE UPDATE OR DELETE ON ledger_transfers
  FOR EACH ROW EXECUTE FUNCTION refuse_change();

-- Score events (spec 3.4). Append-only; the one allowed change is the guest carry-over at
-- registration, which only fills identity_id on a guest's events.
CREATE TABLE point_events (
  id bigserial PRIMARY KEY,
  identity_id bigint REFERENCES identities (id),
  guest_number bigint,
  kind text NOT NULL,
  points integer NOT NULL,
  ref text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (identity_id IS NOT NULL OR guest_number IS NOT NULL)
);
CREATE INDEX point_events_identity_idx ON point_events (identity_id);
CREATE INDEX point_events_guest_idx ON point_events (guest_number) WHERE identity_id IS NULL;

CREATE FUNCTION point_events_guard() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER point_events_append_only BEFORE UPDATE OR DELETE ON point_events
  FOR EACH ROW EXECUTE FUNCTION point_events_guard();

-- Open chat (spec 2.5). seq orders messages and is the stream's replay cursor.
CREATE TABLE chat_messages (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigserial UNIQUE,
  body text NOT NULL,
  author_id bigint REFERENCES identities (id),
  guest_number bigint,
  guest_label text,
  created_at timestamptz NOT NULL DEFAULT now(),
  hidden_at timestamptz,
  CHECK (author_id IS NOT NULL OR guest_number IS NOT NULL)
);
CREATE INDEX chat_messages_guest_idx ON chat_messages (guest_number) WHERE author_id IS NULL;
