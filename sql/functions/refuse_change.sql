-- Refuses the statement (42501): a table that is append-only (no UPDATE, DELETE or TRUNCATE:
-- events, ledgers, the audit log), or, called with 'permanent', one whose rows are never deleted,
-- truncated nor given another key because rows elsewhere name them without a foreign key
-- (sql/036_task_refs_proven.sql, sql/038_identities_permanent.sql).
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_NARGS > 0 AND TG_ARGV[0] = 'permanent' THEN
    RAISE EXCEPTION 'rows of % are permanent (never deleted, nor their key changed)', TG_TABLE_NAME
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END;
$$;
