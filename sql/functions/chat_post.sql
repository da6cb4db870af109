-- The previous release's chat write (sql/020, sql/025), kept for a rolling restart only: its nodes
-- still call it while the new ones start. It now appends as chat_append does (the mentions it was
-- given stored with each message) and returns no inbox items: the indexer (chat_index_next) writes
-- the search columns, the point and the mention items of these messages like any other's, and
-- announces the items. Drop it (by a migration) once no node of a release before sql/032 runs.
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION chat_post(
  p_ids uuid[], p_bodies text[], p_authors bigint[], p_token_hashes text[], p_guests bigint[], p_labels text[],
  p_ats timestamptz[], p_guest_numbers bigint[], p_guest_labels text[], p_mention_msgs uuid[], p_mention_to bigint[],
  p_url text
) RETURNS TABLE (id uuid, seq bigint, items jsonb) LANGUAGE sql AS $$
  SELECT a.id, a.seq, '[]'::jsonb
  FROM chat_append(p_ids, p_bodies, p_authors, p_token_hashes, p_guests, p_labels, p_ats, p_guest_numbers, p_guest_labels,
    ARRAY(SELECT (SELECT string_agg(t.owner::text, ',' ORDER BY t.ord)
                  FROM unnest(p_mention_msgs, p_mention_to) WITH ORDINALITY AS t(mid, owner, ord) WHERE t.mid = u.mid)
          FROM unnest(p_ids) WITH ORDINALITY AS u(mid, ord) ORDER BY u.ord)) AS a
$$;
