-- Moderation across every area (issue 11; DECISIONS.md "Operator", "Scores and badges"): the task
-- board's tables get the hidden_at column every other table of user content already has, a safety
-- report keeps the operator's note and its resolution is final, and the points of a bogus bug
-- report are revoked at most once.

ALTER TABLE tasks ADD COLUMN hidden_at timestamptz;
ALTER TABLE task_submissions ADD COLUMN hidden_at timestamptz;
CREATE INDEX tasks_visible_seq_idx ON tasks (seq DESC) WHERE hidden_at IS NULL;

ALTER TABLE safety_reports
  ADD COLUMN resolution_note text CHECK (char_length(resolution_note) BETWEEN 1 AND 2000),
  ADD CONSTRAINT safety_reports_note_with_resolution CHECK (resolution_note IS NULL OR resolution IS NOT NULL);

-- A resolved report is never resolved again or rewritten, whatever the application does.
CREATE FUNCTION safety_reports_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.resolution IS NOT NULL THEN
    RAISE EXCEPTION 'safety report % is already resolved', OLD.id USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER safety_reports_resolution_final BEFORE UPDATE ON safety_reports
  FOR EACH ROW EXECUTE FUNCTION safety_reports_final();

-- Revoking a bug report's points is a negative point event (point_events is append-only), once.
CREATE UNIQUE INDEX point_events_bug_revoked_once ON point_events (ref) WHERE kind = 'bug_report_revoked';
