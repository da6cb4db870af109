-- Refuses the statement: rows of this table are never deleted, truncated or given another key
-- (sql/036_task_refs_proven.sql: rows written elsewhere refer to them without a foreign key).
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION refuse_removal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'rows of % are permanent (never deleted, nor their key changed)', TG_TABLE_NAME
    USING ERRCODE = 'insufficient_privilege';
END;
$$;
