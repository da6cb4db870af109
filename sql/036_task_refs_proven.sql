-- Three foreign keys whose every writer proves the reference in the statement that writes the row
-- (issue 47, docs/bench-writes-47.md "Fourth round": a key is checked by one trigger call per row
-- written, and these three were 10-15% of a group of claims' or deliveries' PostgreSQL time).
-- - task_events.task_id, task_submissions.task_id: written only by task_moves_apply
--   (sql/functions/task_moves_apply.sql), which refuses with the key's own SQLSTATE (23503) an
--   event or a submission of a task the call neither inserted nor moved, and a move finds its
--   task at the version decided from (or the call fails). A task is never deleted nor its id
--   changed: the triggers below refuse it, so the tasks proven then are there for good.
-- - inbox_items.identity_id: written only by inbox_add and inbox_add_many, each for an owner whose
--   inbox_counters row the same statement has just written, for a member (checked there, and by
--   the counters' own key to identities). No counter row is deleted nor its owner changed (the
--   triggers below), so a member with items keeps a row that refers to it and cannot be deleted.
-- The triggers call refuse_change('permanent') (sql/functions/refuse_change.sql: 42501, the rows
-- are permanent), defined since sql/001 so that it exists when this migration runs.
ALTER TABLE task_events DROP CONSTRAINT task_events_task_id_fkey;
ALTER TABLE task_submissions DROP CONSTRAINT task_submissions_task_id_fkey;
ALTER TABLE inbox_items DROP CONSTRAINT inbox_items_identity_id_fkey;
CREATE TRIGGER tasks_permanent BEFORE DELETE OR UPDATE OF id ON tasks
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_change('permanent');
CREATE TRIGGER tasks_no_truncate BEFORE TRUNCATE ON tasks
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_change('permanent');
CREATE TRIGGER inbox_counters_permanent BEFORE DELETE OR UPDATE OF identity_id ON inbox_counters
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_change('permanent');
CREATE TRIGGER inbox_counters_no_truncate BEFORE TRUNCATE ON inbox_counters
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_change('permanent');
