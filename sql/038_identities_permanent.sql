-- Identities are never deleted, truncated or given another id. Rows written elsewhere name an
-- identity without a foreign key checked row by row (chat_messages.author_id, point_events'
-- identity through its scores row: sql/037; inbox items through their counter row: sql/036): their
-- writers prove the identity exists when they write, and this keeps it there for good. No path of
-- the service deletes an identity (a revoked one keeps its row; a decline stores nothing).
CREATE TRIGGER identities_permanent BEFORE DELETE OR UPDATE OF id ON identities
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_change('permanent');
CREATE TRIGGER identities_no_truncate BEFORE TRUNCATE ON identities
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_change('permanent');
