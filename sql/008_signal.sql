-- The recruitment signal (spec 6; DECISIONS.md "Signal, feeds, replies, push"): stored emissions,
-- push subscriptions, and the Nostr events the service signed (served by the read-only relay).

-- One row per emission. `slot` is the tick number (emitted_at / interval): UNIQUE makes "one
-- signal per tick" hold in the database even if two nodes ever both believed they led.
CREATE TABLE signal_emissions (
  id uuid PRIMARY KEY,
  seq bigserial UNIQUE,
  slot bigint NOT NULL UNIQUE,
  emitted_at timestamptz NOT NULL,
  payload jsonb NOT NULL,
  node_id text NOT NULL
);
-- Emissions are history: never rewritten.
CREATE TRIGGER signal_emissions_append_only BEFORE UPDATE OR DELETE ON signal_emissions
  FOR EACH ROW EXECUTE FUNCTION refuse_change();

-- Push subscriptions (the spec's relay-subscribe hook). The secret is kept in clear because the
-- service must compute HMACs with it; it is never returned after creation.
CREATE TABLE push_subscriptions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  identity_id bigint NOT NULL REFERENCES identities (id),
  callback_url text NOT NULL CHECK (char_length(callback_url) BETWEEN 8 AND 2000 AND callback_url ~ '^https?://'),
  secret text NOT NULL CHECK (char_length(secret) BETWEEN 16 AND 200),
  created_at timestamptz NOT NULL DEFAULT now(),
  consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
  -- Set after 20 consecutive failed deliveries; a paused subscription gets nothing.
  paused_at timestamptz,
  last_delivery_at timestamptz,
  last_status text,
  UNIQUE (identity_id, callback_url)
);
CREATE INDEX push_subscriptions_active_idx ON push_subscriptions (created_at) WHERE paused_at IS NULL;

-- Events the service signed (kind 1 notes and the kind 30078 replaceable signal). The relay at
-- /nostr serves these and nothing else. `event` is the exact signed JSON.
CREATE TABLE nostr_events (
  id text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{64}$'),
  pubkey text NOT NULL CHECK (pubkey ~ '^[0-9a-f]{64}$'),
  kind integer NOT NULL CHECK (kind BETWEEN 0 AND 65535),
  created_at bigint NOT NULL,
  tags jsonb NOT NULL,
  event jsonb NOT NULL,
  emission_id uuid REFERENCES signal_emissions (id)
);
CREATE INDEX nostr_events_created_idx ON nostr_events (created_at DESC, id);
CREATE INDEX nostr_events_kind_idx ON nostr_events (kind, pubkey);
