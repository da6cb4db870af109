-- Phrases of common words (DECISIONS.md "Search"; docs/search.md "Bounds"): the GIN index of
-- search_tsv finds the messages that hold every word of a phrase, not those that hold them side by
-- side, so a phrase of two common words had each of thousands of candidates checked position by
-- position. Each chat message now also keeps its adjacent word pairs, taken from the positions of
-- the same search vector (the adjacency the phrase operator <-> tests), under a GIN index: the
-- pairs of a query's phrases narrow the candidates to the messages that hold them, and the phrase
-- test on search_tsv stays the judge. Written by the insert itself (a generated column).
-- The live definition (docs/architecture.md "SQL functions"): edit it here, never in a migration.
CREATE OR REPLACE FUNCTION commons_pairs(v tsvector) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(DISTINCT a.lexeme || ' ' || b.lexeme), '{}')
  FROM (SELECT u.lexeme, unnest(u.positions) AS pos FROM unnest(v) AS u) a
  JOIN (SELECT u.lexeme, unnest(u.positions) AS pos FROM unnest(v) AS u) b ON b.pos = a.pos + 1
$$;
