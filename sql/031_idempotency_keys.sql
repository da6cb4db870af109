-- Idempotent writes (DECISIONS.md "Idempotent writes"): the first answer to a write sent with an
-- Idempotency-Key, per caller scope and key, written in the same transaction as the write itself
-- (src/domain/idempotency.ts), so a crash cannot keep one without the other. A repeat within 24 h
-- with the same fingerprint (method, path and body) gets this answer again; rows older than that
-- are reaped (src/actors/idempotency-reaper.ts) and no longer count.
CREATE TABLE idempotency_keys (
  scope text NOT NULL,
  key text NOT NULL,
  fingerprint bytea NOT NULL,
  status smallint NOT NULL,
  body jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
