-- Standing (spec 2.11; DECISIONS.md "Scores and badges"). The activity score of each identity is
-- kept beside the append-only point_events by a trigger, so standing and badge reads are one row
-- and cannot drift from the events: score = sum of points + 4 x relay points; peak = the highest
-- score ever reached, because the highest badge tier reached is held even if points are later
-- revoked (a negative event). Thresholds: bronze 30, silver 100, gold 300.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION point_weight(kind text, points integer) RETURNS integer
  LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN kind LIKE 'relay_level_%' THEN 4 * points ELSE points END $$;
