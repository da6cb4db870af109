-- A provisional guest token (a read's, carrying its own nonce) names one guest for its whole life
-- (DECISIONS.md "Identities and numbers"): its first write claims a number for that token, here,
-- once; every later write with it, on any node, finds the same number. Keyed by the token's
-- SHA-256 (never the token itself).
CREATE TABLE guest_claims (
  token_hash bytea PRIMARY KEY,
  guest_number bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
