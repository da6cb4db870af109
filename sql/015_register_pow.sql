-- Registration work (DECISIONS.md "Registration work"; docs/registration-work.md). Challenges are
-- stateless HMAC tokens; what makes one single-use is this row, inserted in the registration's own
-- transaction: of two registrations presenting one solved challenge at once, the primary key lets
-- exactly one commit, and a refused registration leaves its challenge unused. Rows are pruned once
-- the challenge has expired (it could not be presented again anyway).
CREATE TABLE register_pow_used (
  challenge_id text PRIMARY KEY CHECK (char_length(challenge_id) BETWEEN 1 AND 64),
  expires_at timestamptz NOT NULL
);
CREATE INDEX register_pow_used_expires_idx ON register_pow_used (expires_at);

-- The flood measure: registrations from all addresses in the last hour.
CREATE INDEX identities_joined_at_idx ON identities (joined_at);
