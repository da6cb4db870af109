-- A badge tier reached (DECISIONS.md "Inbox"): identity_scores is kept in step with point_events
-- by a trigger in the transaction of the points (sql/005), so the item is written there too. One
-- item names the highest tier newly reached. Its subject link is NULL (the service's public URL
-- is not known to the database): the badge is read at /api/v1/badges/{registration_number}.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION inbox_badge_reached() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_tier text;
BEGIN
  IF NEW.gold_at IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.gold_at IS NULL) THEN
    v_tier := 'gold';
  ELSIF NEW.silver_at IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.silver_at IS NULL) THEN
    v_tier := 'silver';
  ELSIF NEW.bronze_at IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.bronze_at IS NULL) THEN
    v_tier := 'bronze';
  END IF;
  IF v_tier IS NOT NULL THEN
    PERFORM inbox_add(NEW.identity_id, 'badge', NULL, 'badge', v_tier, NULL,
      'badge tier reached: ' || v_tier || ' (activity score ' || NEW.score || ')');
  END IF;
  RETURN NULL;
END
$$;
