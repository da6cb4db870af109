-- The two parts of the watermark: the sequence's last value and the lowest first seq of the groups
-- in flight (NULL: none), read as sql/functions/chat_watermark.sql says.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION chat_watermark_parts(OUT last bigint, OUT first bigint) LANGUAGE plpgsql AS $$
DECLARE
  v_tag bigint := 'chat_messages_seq_seq'::regclass::oid::bigint & 65535;
  v_drawing integer;
BEGIN
  LOOP
    last := coalesce(pg_sequence_last_value('chat_messages_seq_seq'::regclass), 0);
    SELECT count(*) FILTER (WHERE g.first IS NULL)::integer, min(g.first) INTO v_drawing, first
      FROM (
        SELECT l.pid,
          min(((l.classid::bigint & 4095) << 32) + l.objid::bigint) FILTER (WHERE l.objsubid = 1) AS first
        FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
          AND ((l.objsubid = 2 AND l.classid = 7262004 AND l.objid = v_tag)
            -- A range key held exclusively is a group's; a reader waiting for a group
            -- (chat_watermark_wait) keeps a shared one, which is no group.
            OR (l.objsubid = 1 AND l.classid::bigint >> 12 = 262144 + v_tag AND l.mode = 'ExclusiveLock'))
        GROUP BY l.pid
      ) g;
    EXIT WHEN v_drawing = 0;
    -- A group between its draw and its announcement is a few microseconds from leaving it, unless
    -- its backend waits for a core (a loaded host): read again after a millisecond, not in a spin
    -- that would take the core from it (and each read of pg_locks holds up every lock taken meanwhile).
    PERFORM pg_sleep(0.001);
  END LOOP;
END
$$;
