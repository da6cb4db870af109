-- Nothing secret at rest (DECISIONS.md "Idempotent writes"): an Idempotency-Key is kept only as its
-- SHA-256 (key_hash), and the stored answer only sealed (AES-256-GCM under a key derived from the
-- Idempotency-Key with HKDF-SHA256, the scope as salt: src/domain/sealed-answer.ts), so a copy of
-- the database holds no key, no api_token and no webhook secret a replay would give.
-- Rows written before this change hold keys and answers (tokens among them) in the clear: dropped
-- here, so a keyed write retried across the upgrade runs again (docs/operations.md "Upgrades").
-- The clear columns stay, nullable, for the previous release's nodes during a rolling upgrade (its
-- ON CONFLICT (scope, key) needs the unique index on them); the new release's reaper deletes any
-- row they write at its next sweep, and the release after this one drops them.
DELETE FROM idempotency_keys;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys
  ALTER COLUMN key DROP NOT NULL,
  ALTER COLUMN body DROP NOT NULL,
  ADD COLUMN key_hash bytea,
  ADD COLUMN sealed bytea,
  ADD CONSTRAINT idempotency_keys_form_check CHECK (
    (key IS NULL AND body IS NULL AND key_hash IS NOT NULL AND sealed IS NOT NULL)
    OR (key IS NOT NULL AND body IS NOT NULL AND key_hash IS NULL AND sealed IS NULL));
CREATE UNIQUE INDEX idempotency_keys_scope_key ON idempotency_keys (scope, key);
CREATE UNIQUE INDEX idempotency_keys_scope_key_hash ON idempotency_keys (scope, key_hash);
