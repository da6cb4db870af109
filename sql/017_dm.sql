-- Direct messages (DECISIONS.md "Direct messages"): only the two parties read a conversation;
-- the operator sees a message only through a report of type `dm` filed by a party.

-- One row per pair (lo_id < hi_id): who opened it and when (the first-contact limit counts these),
-- the newest message, and each party's read watermark.
CREATE TABLE dm_conversations (
  lo_id bigint NOT NULL REFERENCES identities (id),
  hi_id bigint NOT NULL REFERENCES identities (id),
  opened_by bigint NOT NULL REFERENCES identities (id),
  opened_at timestamptz NOT NULL DEFAULT now(),
  last_seq bigint NOT NULL DEFAULT 0,
  lo_read_seq bigint NOT NULL DEFAULT 0,
  hi_read_seq bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (lo_id, hi_id),
  CHECK (lo_id < hi_id),
  CHECK (opened_by IN (lo_id, hi_id))
);
CREATE INDEX dm_conversations_lo_idx ON dm_conversations (lo_id, last_seq);
CREATE INDEX dm_conversations_hi_idx ON dm_conversations (hi_id, last_seq);
CREATE INDEX dm_conversations_opened_idx ON dm_conversations (opened_by, opened_at);

CREATE TABLE dm_messages (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigserial UNIQUE,
  lo_id bigint NOT NULL,
  hi_id bigint NOT NULL,
  sender_id bigint NOT NULL REFERENCES identities (id),
  recipient_id bigint NOT NULL REFERENCES identities (id),
  body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 2000),
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Set when the operator resolves a report of this message by hiding it.
  hidden_at timestamptz,
  FOREIGN KEY (lo_id, hi_id) REFERENCES dm_conversations (lo_id, hi_id),
  CHECK (sender_id <> recipient_id),
  CHECK (lo_id = least(sender_id, recipient_id) AND hi_id = greatest(sender_id, recipient_id))
);
CREATE INDEX dm_messages_pair_idx ON dm_messages (lo_id, hi_id, seq);

CREATE TABLE dm_blocks (
  blocker_id bigint NOT NULL REFERENCES identities (id),
  blocked_id bigint NOT NULL REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (blocker_id, blocked_id),
  CHECK (blocker_id <> blocked_id)
);

-- A party may report a message it sent or received (DECISIONS.md "Direct messages").
ALTER TABLE safety_reports DROP CONSTRAINT safety_reports_target_type_check;
ALTER TABLE safety_reports ADD CONSTRAINT safety_reports_target_type_check CHECK (target_type IN ('chat_message', 'post',
  'comment', 'question', 'answer', 'proposal', 'task', 'submission', 'reply', 'campaign', 'ai', 'dm'));
