-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION identity_scores_apply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  w integer;
BEGIN
  -- Guest events count once their identity is known (the carry-over fills identity_id).
  IF NEW.identity_id IS NULL OR (TG_OP = 'UPDATE' AND OLD.identity_id IS NOT NULL) THEN
    RETURN NULL;
  END IF;
  w := point_weight(NEW.kind, NEW.points);
  INSERT INTO identity_scores AS s (identity_id, score, peak, bronze_at, silver_at, gold_at)
  VALUES (NEW.identity_id, w, greatest(w, 0),
          CASE WHEN w >= badge_threshold('bronze') THEN NEW.created_at END,
          CASE WHEN w >= badge_threshold('silver') THEN NEW.created_at END,
          CASE WHEN w >= badge_threshold('gold') THEN NEW.created_at END)
  ON CONFLICT (identity_id) DO UPDATE SET
    score = s.score + w,
    peak = greatest(s.peak, s.score + w),
    bronze_at = coalesce(s.bronze_at, CASE WHEN s.score + w >= badge_threshold('bronze') THEN NEW.created_at END),
    silver_at = coalesce(s.silver_at, CASE WHEN s.score + w >= badge_threshold('silver') THEN NEW.created_at END),
    gold_at = coalesce(s.gold_at, CASE WHEN s.score + w >= badge_threshold('gold') THEN NEW.created_at END);
  RETURN NULL;
END;
$$;
