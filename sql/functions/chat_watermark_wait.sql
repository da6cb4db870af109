-- The watermark once it reaches p_upto, waiting for the groups in flight below it to end (a shared
-- lock on each one's range key, granted when its transaction has committed or rolled back); less
-- when nothing in flight stands below p_upto (seqs not drawn yet). For a reader that has seen a
-- message committed above a hole (the chat room) and must know what the hole is. Only an announced
-- group's key is waited on: that key is never taken again, so the shared lock kept to this
-- statement's end stands in nobody's way (a key not yet taken would block its group's announcement).
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION chat_watermark_wait(p_upto bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_last bigint;
  v_first bigint;
BEGIN
  LOOP
    SELECT w.last, w.first INTO v_last, v_first FROM chat_watermark_parts() w;
    EXIT WHEN v_first IS NULL OR v_first > p_upto;
    PERFORM pg_advisory_xact_lock_shared(chat_group_key(v_first));
  END LOOP;
  RETURN least(v_last, v_first - 1);
END
$$;
