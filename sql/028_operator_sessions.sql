-- The operator console's sessions (docs/operations.md "The operator's console"). Stored in the
-- database so every node agrees and a sign-out is immediate everywhere. Only a hash of the
-- session id is kept (the id itself lives in the operator's HttpOnly cookie), with a fingerprint
-- of the operator token it was opened with: rotating OPERATOR_TOKEN ends every session.
CREATE TABLE operator_sessions (
  id_hash bytea PRIMARY KEY CHECK (octet_length(id_hash) = 32),
  token_fp bytea NOT NULL,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX operator_sessions_expires_idx ON operator_sessions (expires_at);
