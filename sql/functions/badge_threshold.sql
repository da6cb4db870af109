-- Badge tiers (spec 2.11; DECISIONS.md "Scores and badges"): the activity score at which each tier
-- is first reached. The one place the thresholds are written; the score triggers
-- (identity_scores_apply, identity_scores_apply_inserted) read them from here. Immutable SQL with a
-- constant argument, so the planner folds each call to its number.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION badge_threshold(p_tier text) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE p_tier WHEN 'bronze' THEN 30 WHEN 'silver' THEN 100 WHEN 'gold' THEN 300 END
$$;
