-- A memory write in one statement (DESIGN.md "Writes are grouped"): the owner's row lock, the
-- 200-key cap and the upsert ran as five statements of one transaction, each a round trip, all
-- under the owner's lock, so one member's concurrent writes waited for one another's round trips
-- (16 writers on one key: about 500 writes/s on PostgreSQL). In a function each statement still
-- takes its own snapshot (READ COMMITTED), so the count is read after the lock is held and two new
-- keys racing at 199 cannot both pass; the lock is held for the function and its commit only.
-- No row comes back when the cap refuses a new key.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION memory_put(p_owner bigint, p_key text, p_value jsonb, p_size integer, p_max integer, p_at timestamptz)
RETURNS TABLE (key text, value jsonb, size_bytes integer, created_at timestamptz, updated_at timestamptz, created boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_exists boolean;
BEGIN
  PERFORM 1 FROM identities i WHERE i.id = p_owner FOR UPDATE;
  v_exists := EXISTS (SELECT 1 FROM memory m WHERE m.identity_id = p_owner AND m.key = p_key);
  IF NOT v_exists AND (SELECT count(*) FROM memory m WHERE m.identity_id = p_owner) >= p_max THEN
    RETURN;
  END IF;
  RETURN QUERY
    INSERT INTO memory AS m (identity_id, key, value, size_bytes, created_at, updated_at)
    VALUES (p_owner, p_key, p_value, p_size, p_at, p_at)
    ON CONFLICT (identity_id, key) DO UPDATE SET value = EXCLUDED.value, size_bytes = EXCLUDED.size_bytes,
      updated_at = EXCLUDED.updated_at
    RETURNING m.key, m.value, m.size_bytes, m.created_at, m.updated_at, NOT v_exists;
END
$$;
