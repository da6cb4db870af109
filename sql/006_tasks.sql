-- The task board (spec 3.2; DECISIONS.md "Tasks (credits)", "Beyond the spec"). The XState task
-- machine decides moves; these tables record the state reached, keep each deadline durable and
-- make the escrow impossible to lose, mint or pay twice.

CREATE TABLE tasks (
  id uuid PRIMARY KEY,
  -- Keyset cursor for lists (newest first).
  seq bigserial UNIQUE,
  state text NOT NULL CHECK (state IN ('open', 'claimed', 'delivered', 'approved', 'closed')),
  -- Bumped by every move; task_events (task_id, version) is unique, so two moves decided from the
  -- same version can never both commit.
  version integer NOT NULL DEFAULT 0,
  title text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
  body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 10000),
  reward_points integer NOT NULL CHECK (reward_points BETWEEN 1 AND 50),
  poster_id bigint NOT NULL REFERENCES identities (id),
  claimer_id bigint REFERENCES identities (id),
  escrow_account text NOT NULL UNIQUE REFERENCES ledger_accounts (id),
  created_at timestamptz NOT NULL,
  -- When the current open period ends unclaimed (7 days; restarted when a claim lapses).
  expires_at timestamptz NOT NULL,
  claimed_at timestamptz,
  claim_expires_at timestamptz,
  delivered_at timestamptz,
  approve_by timestamptz,
  approved_at timestamptz,
  approved_how text CHECK (approved_how IN ('poster', 'automatic')),
  closed_at timestamptz,
  closed_reason text CHECK (closed_reason IN ('cancelled', 'expired')),
  -- The one pending deadline, derived from the state: the scheduler's work queue.
  due_at timestamptz GENERATED ALWAYS AS (
    CASE state WHEN 'open' THEN expires_at WHEN 'claimed' THEN claim_expires_at WHEN 'delivered' THEN approve_by END
  ) STORED,
  CONSTRAINT poster_cannot_claim CHECK (claimer_id IS NULL OR claimer_id <> poster_id),
  CONSTRAINT claimer_matches_state CHECK ((claimer_id IS NOT NULL) = (state IN ('claimed', 'delivered', 'approved'))),
  CONSTRAINT deadline_present CHECK (state IN ('approved', 'closed') OR due_at IS NOT NULL)
);
CREATE INDEX tasks_due_idx ON tasks (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX tasks_state_seq_idx ON tasks (state, seq DESC);

-- At commit, a task's escrow holds exactly its reward while the task is live and nothing once it
-- is approved or closed. Deferred so a move may update the task and the ledger in any order; it
-- reads the task's current row, since one transaction may move a task twice (a due deadline
-- fired on the way to a caller's move).
CREATE FUNCTION tasks_escrow_check() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  t tasks%ROWTYPE;
  held bigint;
BEGIN
  SELECT * INTO t FROM tasks WHERE id = NEW.id;
  SELECT balance INTO held FROM ledger_accounts WHERE id = t.escrow_account;
  IF held IS DISTINCT FROM (CASE WHEN t.state IN ('approved', 'closed') THEN 0 ELSE t.reward_points END) THEN
    RAISE EXCEPTION 'escrow of task % holds %, not what state % requires', t.id, held, t.state
      USING ERRCODE = 'check_violation', CONSTRAINT = 'escrow_matches_state';
  END IF;
  RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER tasks_escrow_matches_state AFTER INSERT OR UPDATE ON tasks
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tasks_escrow_check();

-- One escrow pays out once: either the reward to the solver or the refund to the poster.
CREATE UNIQUE INDEX ledger_transfers_task_payout_once ON ledger_transfers (from_account)
  WHERE kind IN ('task_reward', 'task_refund');

-- A delivered result. One per task: a task is submitted once, from `claimed`.
CREATE TABLE task_submissions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  task_id uuid NOT NULL UNIQUE REFERENCES tasks (id),
  author_id bigint NOT NULL REFERENCES identities (id),
  body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 20000),
  created_at timestamptz NOT NULL
);

-- Every move, in order: the task's history and the proof that a deadline fired once.
CREATE TABLE task_events (
  seq bigserial PRIMARY KEY,
  task_id uuid NOT NULL REFERENCES tasks (id),
  version integer NOT NULL,
  event text NOT NULL CHECK (event IN ('POST', 'CLAIM', 'SUBMIT', 'APPROVE', 'CANCEL', 'EXPIRE_UNCLAIMED', 'AUTO_APPROVE',
    'CLAIM_LAPSED')),
  from_state text,
  to_state text NOT NULL,
  -- NULL when the clock moved the task.
  actor_id bigint REFERENCES identities (id),
  at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (task_id, version)
);
CREATE TRIGGER task_events_append_only BEFORE UPDATE OR DELETE ON task_events
  FOR EACH ROW EXECUTE FUNCTION refuse_change();
