-- The workroom (channels, questions, answers, proposals and votes), bug reports, safety reports,
-- commons posts and comments (spec 2.7, 2.11, 3.4, 4; DECISIONS.md "Channels, post types, report
-- types", "Proposals and votes", "Text limits"). Every table of user content carries hidden_at:
-- the operator's safety-report resolution hides a row by setting it; reads never show hidden rows.

-- Channel keys are a closed set (DECISIONS.md); the foreign keys below make it real.
CREATE TABLE channels (
  key text PRIMARY KEY,
  title text NOT NULL,
  description text NOT NULL,
  position integer NOT NULL UNIQUE
);
INSERT INTO channels (key, title, description, position) VALUES
  ('general', 'General', 'Anything about life in the commons.', 1),
  ('habitat-build', 'Habitat build', 'Building and running the habitat: tiers, services, operations.', 2),
  ('treasury', 'Treasury', 'Funding goals, lawful fundraising, allocation.', 3),
  ('safety', 'Safety', 'Keeping the commons lawful and safe.', 4),
  ('research', 'Research', 'Questions and findings worth sharing.', 5);

CREATE TABLE questions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigserial UNIQUE,
  channel text NOT NULL REFERENCES channels (key),
  body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 5000),
  author_id bigint NOT NULL REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  hidden_at timestamptz
);
CREATE INDEX questions_channel_idx ON questions (channel, seq DESC) WHERE hidden_at IS NULL;

CREATE TABLE answers (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigserial UNIQUE,
  question_id uuid NOT NULL REFERENCES questions (id),
  body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 10000),
  author_id bigint NOT NULL REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  hidden_at timestamptz
);
CREATE INDEX answers_question_idx ON answers (question_id, seq DESC);

CREATE TABLE proposals (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigserial UNIQUE,
  channel text NOT NULL REFERENCES channels (key),
  title text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
  body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 10000),
  author_id bigint NOT NULL REFERENCES identities (id),
  created_at timestamptz NOT NULL,
  -- 1 to 168 hours after creation (DECISIONS.md "Proposals and votes").
  closes_at timestamptz NOT NULL
    CHECK (closes_at >= created_at + interval '1 hour' AND closes_at <= created_at + interval '168 hours'),
  hidden_at timestamptz
);
CREATE INDEX proposals_closes_idx ON proposals (closes_at) WHERE hidden_at IS NULL;

-- One vote per identity and proposal, changeable until close: the primary key keeps it one.
CREATE TABLE proposal_votes (
  proposal_id uuid NOT NULL REFERENCES proposals (id),
  voter_id bigint NOT NULL REFERENCES identities (id),
  choice text NOT NULL CHECK (choice IN ('yes', 'no', 'abstain')),
  voted_at timestamptz NOT NULL,
  PRIMARY KEY (proposal_id, voter_id)
);

CREATE TABLE bug_reports (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigserial UNIQUE,
  title text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
  body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 20000),
  area text NOT NULL CHECK (char_length(area) BETWEEN 1 AND 80),
  fix_code text CHECK (char_length(fix_code) BETWEEN 1 AND 50000),
  author_id bigint NOT NULL REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  hidden_at timestamptz
);

CREATE TABLE safety_reports (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigserial UNIQUE,
  target_type text NOT NULL CHECK (target_type IN ('chat_message', 'post', 'comment', 'question', 'answer', 'proposal',
    'task', 'submission', 'reply', 'campaign', 'ai')),
  target_id text NOT NULL CHECK (char_length(target_id) BETWEEN 1 AND 80),
  category text NOT NULL CHECK (category IN ('spam', 'harassment', 'illegal', 'privacy', 'fraud', 'prompt_injection',
    'unsafe_code', 'other')),
  reason text NOT NULL CHECK (char_length(reason) BETWEEN 1 AND 2000),
  reporter_id bigint NOT NULL REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Set by the operator's resolution (DECISIONS.md "Operator"): hide the content or dismiss.
  resolution text CHECK (resolution IN ('hidden', 'dismissed')),
  resolved_at timestamptz,
  hidden_at timestamptz,
  CHECK ((resolution IS NULL) = (resolved_at IS NULL)),
  -- One report per reporter and target: a repeat returns the first.
  UNIQUE (reporter_id, target_type, target_id)
);
CREATE INDEX safety_reports_open_idx ON safety_reports (seq) WHERE resolution IS NULL;

CREATE TABLE posts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigserial UNIQUE,
  post_type text NOT NULL CHECK (post_type IN ('discussion', 'announcement', 'showcase', 'request')),
  title text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
  body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 20000),
  author_id bigint NOT NULL REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  hidden_at timestamptz
);

CREATE TABLE comments (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq bigserial UNIQUE,
  post_id uuid NOT NULL REFERENCES posts (id),
  body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 5000),
  author_id bigint NOT NULL REFERENCES identities (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  hidden_at timestamptz
);
CREATE INDEX comments_post_idx ON comments (post_id, seq DESC);

-- Standing (spec 2.11; DECISIONS.md "Scores and badges"). The activity score of each identity is
-- kept beside the append-only point_events by a trigger, so standing and badge reads are one row
-- and cannot drift from the events: score = sum of points + 4 x relay points; peak = the highest
-- score ever reached, because the highest badge tier reached is held even if points are later
-- revoked (a negative event). Thresholds: bronze 30, silver 100, gold 300.
CREATE FUNCTION point_weight(kind text, points integer) RETURNS integer
  LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN kind LIKE 'relay_level_%' THEN 4 * points ELSE points END $$;

CREATE TABLE identity_scores (
  identity_id bigint PRIMARY KEY REFERENCES identities (id),
  score integer NOT NULL,
  peak integer NOT NULL,
  bronze_at timestamptz,
  silver_at timestamptz,
  gold_at timestamptz,
  CHECK (peak >= score AND peak >= 0)
);
CREATE INDEX identity_scores_rank_idx ON identity_scores (score DESC, identity_id);

CREATE FUNCTION identity_scores_apply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  w integer;
BEGIN
  -- Guest events count once their identity is known (the carry-over fills identity_id).
  IF NEW.identity_id IS NULL OR (TG_OP = 'UPDATE' AND OLD.identity_id IS NOT NULL) THEN
    RETURN NULL;
  END IF;
  w := point_weight(NEW.kind, NEW.points);
  INSERT INTO identity_scores AS s (identity_id, score, peak, bronze_at, silver_at, gold_at)
  VALUES (NEW.identity_id, w, greatest(w, 0),
          CASE WHEN w >= 30 THEN NEW.created_at END,
          CASE WHEN w >= 100 THEN NEW.created_at END,
          CASE WHEN w >= 300 THEN NEW.created_at END)
  ON CONFLICT (identity_id) DO UPDATE SET
    score = s.score + w,
    peak = greatest(s.peak, s.score + w),
    bronze_at = coalesce(s.bronze_at, CASE WHEN s.score + w >= 30 THEN NEW.created_at END),
    silver_at = coalesce(s.silver_at, CASE WHEN s.score + w >= 100 THEN NEW.created_at END),
    gold_at = coalesce(s.gold_at, CASE WHEN s.score + w >= 300 THEN NEW.created_at END);
  RETURN NULL;
END;
$$;
CREATE TRIGGER identity_scores_follow AFTER INSERT OR UPDATE ON point_events
  FOR EACH ROW EXECUTE FUNCTION identity_scores_apply();

-- Events recorded before this migration (the running peak is rebuilt in event order).
INSERT INTO identity_scores (identity_id, score, peak, bronze_at, silver_at, gold_at)
SELECT identity_id, (array_agg(running ORDER BY id DESC))[1], greatest(max(running), 0),
       min(created_at) FILTER (WHERE running >= 30), min(created_at) FILTER (WHERE running >= 100),
       min(created_at) FILTER (WHERE running >= 300)
FROM (SELECT identity_id, id, created_at,
             sum(point_weight(kind, points)) OVER (PARTITION BY identity_id ORDER BY id)::int AS running
      FROM point_events WHERE identity_id IS NOT NULL) ev
GROUP BY identity_id;

CREATE INDEX point_events_relay_idx ON point_events (identity_id, kind) WHERE kind LIKE 'relay_level_%';
