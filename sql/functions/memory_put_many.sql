-- Memory writes grouped (DESIGN.md "Writes are grouped"): the node's group commit
-- (src/domain/memory.ts) sends the puts that arrived together in one call, one transaction and one
-- commit, in the order they were submitted. One by one (sql/024), a member's concurrent writes each
-- held the owner's row lock for a statement and its commit: 16 writers on one key, about 1,300
-- writes/s on PostgreSQL, about half the naive one-INSERT-per-request server.
-- The owners are locked first, in id order, so two groups sharing owners (two nodes) never wait for
-- each other in a cycle. Then each put runs as memory_put runs it: the key's existence and the
-- owner's count are read after every earlier put of the group (each statement of a function sees
-- the ones before it), so the 200-key cap holds within a group as across groups.
-- One row per written put, `ord` its 1-based position; no row for a put the cap refused.
-- memory_put (sql/024) stays: the previous release calls it during a rolling restart.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION memory_put_many(p_owners bigint[], p_keys text[], p_values text[], p_sizes integer[], p_ats timestamptz[], p_max integer)
RETURNS TABLE (ord integer, key text, value jsonb, size_bytes integer, created_at timestamptz, updated_at timestamptz, created boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_exists boolean;
BEGIN
  PERFORM 1 FROM identities i WHERE i.id = ANY (p_owners) ORDER BY i.id FOR UPDATE;
  FOR n IN 1 .. coalesce(array_length(p_owners, 1), 0) LOOP
    v_exists := EXISTS (SELECT 1 FROM memory m WHERE m.identity_id = p_owners[n] AND m.key = p_keys[n]);
    IF NOT v_exists AND (SELECT count(*) FROM memory m WHERE m.identity_id = p_owners[n]) >= p_max THEN
      CONTINUE;
    END IF;
    RETURN QUERY
      INSERT INTO memory AS m (identity_id, key, value, size_bytes, created_at, updated_at)
      VALUES (p_owners[n], p_keys[n], p_values[n]::jsonb, p_sizes[n], p_ats[n], p_ats[n])
      ON CONFLICT (identity_id, key) DO UPDATE SET value = EXCLUDED.value, size_bytes = EXCLUDED.size_bytes,
        updated_at = EXCLUDED.updated_at
      RETURNING n, m.key, m.value, m.size_bytes, m.created_at, m.updated_at, NOT v_exists;
  END LOOP;
END
$$;
