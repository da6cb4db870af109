-- Scores follow point events per statement, not per row (DESIGN.md "Writes are grouped"). A chat
-- group commit inserts one point event per message; row by row, each event upserted its author's
-- identity_scores row, so a group of n posts by one author wrote n versions of one row in one
-- transaction (each update walking the versions before it) and ran n triggers: the grouped write
-- slowed down as the group grew. Now one statement's events update each identity once: the rows
-- are created and locked in identity order (no deadlock between concurrent statements), then each
-- is moved by its events in event order, so score, peak and the time each tier was first reached
-- are exactly what the row-by-row trigger made (sql/005_workroom.sql). A tier reached in the
-- statement gives one badge item, naming the highest (sql/016_inbox.sql). Updates of point events
-- (a guest's points carried over to the identity it registers) still go row by row.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION identity_scores_apply_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO identity_scores (identity_id, score, peak)
    SELECT DISTINCT n.identity_id, 0, 0 FROM new_events n WHERE n.identity_id IS NOT NULL ORDER BY 1
    ON CONFLICT (identity_id) DO NOTHING;
  PERFORM 1 FROM identity_scores s
    WHERE s.identity_id IN (SELECT n.identity_id FROM new_events n WHERE n.identity_id IS NOT NULL)
    ORDER BY s.identity_id FOR UPDATE;
  UPDATE identity_scores s SET
      score = r.score,
      peak = greatest(s.peak, r.peak),
      bronze_at = coalesce(s.bronze_at, r.bronze_at),
      silver_at = coalesce(s.silver_at, r.silver_at),
      gold_at = coalesce(s.gold_at, r.gold_at)
    FROM (
      SELECT e.identity_id, (array_agg(e.running ORDER BY e.id DESC))[1] AS score, max(e.running) AS peak,
        min(e.created_at) FILTER (WHERE e.running >= badge_threshold('bronze')) AS bronze_at,
        min(e.created_at) FILTER (WHERE e.running >= badge_threshold('silver')) AS silver_at,
        min(e.created_at) FILTER (WHERE e.running >= badge_threshold('gold')) AS gold_at
      FROM (
        SELECT n.identity_id, n.id, n.created_at,
          b.score + sum(point_weight(n.kind, n.points)) OVER (PARTITION BY n.identity_id ORDER BY n.id) AS running
        FROM new_events n JOIN identity_scores b ON b.identity_id = n.identity_id
      ) e
      GROUP BY e.identity_id
    ) r
    WHERE s.identity_id = r.identity_id;
  RETURN NULL;
END
$$;
