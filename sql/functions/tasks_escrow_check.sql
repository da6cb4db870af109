-- At commit, a task's escrow holds exactly its reward while the task is live and nothing once it
-- is approved or closed. Deferred so a move may update the task and the ledger in any order; it
-- reads the task's current row, since one transaction may move a task twice (a due deadline
-- fired on the way to a caller's move).
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION tasks_escrow_check() RETURNS trigger LANGUAGE plpgsql AS $$
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
