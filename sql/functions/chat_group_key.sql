-- A group's range key: one bigint advisory key per first seq, 2^62 + tag << 44 + first (seqs below
-- 2^44); pg_locks shows it as classid = 2^18 + tag << 12 + first's high bits, objid = its low 32
-- (chat_watermark_parts decodes it). tag: as in chat_watermark.sql.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION chat_group_key(p_first bigint) RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT 4611686018427387904 + (('chat_messages_seq_seq'::regclass::oid::bigint & 65535) << 44) + p_first
$$;
