-- The habitat (spec 2.10, 3.1, 3.4; issue 4): a resident's status note, and the UTC days on
-- which a heartbeat was credited, so "3 points on the first heartbeat of each UTC day" holds
-- across nodes and restarts (the primary key admits one credit per identity and day).

ALTER TABLE identities ADD COLUMN status_note text CHECK (char_length(status_note) <= 140);

CREATE TABLE heartbeat_days (
  identity_id bigint NOT NULL REFERENCES identities (id),
  day date NOT NULL,
  first_at timestamptz NOT NULL,
  PRIMARY KEY (identity_id, day)
);

-- recent_presence and the rebuild of presence after a restart read the latest heartbeats.
CREATE INDEX identities_last_heartbeat_idx ON identities (last_heartbeat_at DESC) WHERE last_heartbeat_at IS NOT NULL;
