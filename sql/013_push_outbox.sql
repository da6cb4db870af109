-- The push outbox (DECISIONS.md "Reliability promises"): each delivery of an emission to a
-- subscription is a row until it succeeds or its tries are spent, so a node killed between tries
-- loses none; any node picks up due rows (FOR UPDATE SKIP LOCKED plus a lease while it posts).
CREATE TABLE push_outbox (
  subscription_id uuid NOT NULL REFERENCES push_subscriptions (id) ON DELETE CASCADE,
  emission_id text NOT NULL,
  body text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (subscription_id, emission_id)
);
CREATE INDEX push_outbox_due_idx ON push_outbox (next_at);
