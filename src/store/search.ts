// SQL for search (DECISIONS.md "Search"; sql/014_search.sql). One statement: each searched table
// ranks its own matches (the GIN index finds them, hidden rows are never read) and keeps its best
// page, then the pages are merged by rank, then recency; authors are joined for the final page only.
import type { PendingQuery, Row, Sql } from 'postgres';

export const SEARCH_TYPES = ['chat', 'post', 'comment', 'question', 'answer', 'proposal', 'task', 'ai'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

/** Where the previous page ended: the last hit's rank (float4 as text), created_at (ISO, in
 * microseconds), type and id. The order is (rank, created_at, type, id), all descending. */
export interface SearchCursor {
  rank: string;
  at: string;
  type: SearchType;
  id: string;
}

export interface SearchRow {
  type: SearchType;
  id: string;
  /** The post of a comment, the question of an answer, a chat message's page cursor; else null. */
  parent: string | null;
  title: string | null;
  body: string | null;
  author_id: number | null;
  author_name: string | null;
  guest_number: number | null;
  guest_label: string | null;
  created_at: Date;
  at: string;
  rank: string;
}

/** What the query parses to: `''` has no word at all, `'T'` has only excluded words (it would
 * match every row, which no index can find); anything else is searchable. */
export async function queryTree(sql: Sql, q: string): Promise<string> {
  const [row] = await sql<{ tree: string }[]>`SELECT querytree(websearch_to_tsquery('simple', ${q}))::text AS tree`;
  return row?.tree ?? '';
}

type Frag = PendingQuery<Row[]>;

// Each branch yields the same columns; `tsv` is its table's generated column, `cond` its visibility.
function branch(sql: Sql, type: SearchType, cur: SearchCursor | null, limit: number): Frag {
  const after = cur
    ? sql`AND (ts_rank(x.search_tsv, q.q), x.created_at, ${type}::text, x.id::text) < (${cur.rank}::real, ${cur.at}::timestamptz, ${cur.type}::text, ${cur.id}::text)`
    : sql``;
  const tail = sql`${after} ORDER BY rank DESC, x.created_at DESC, x.id::text DESC LIMIT ${limit}`;
  switch (type) {
    case 'chat':
      // parent: the chat page cursor that starts with this message (newest first before seq + 1).
      return sql`(SELECT 'chat' AS type, x.id::text AS id, (x.seq + 1)::text AS parent, NULL::text AS title, x.body,
        x.author_id, x.guest_number, x.guest_label, x.created_at, ts_rank(x.search_tsv, q.q) AS rank
        FROM chat_messages x, q WHERE x.search_tsv @@ q.q AND x.hidden_at IS NULL ${tail})`;
    case 'post':
      return sql`(SELECT 'post' AS type, x.id::text AS id, NULL::text AS parent, x.title, x.body,
        x.author_id, NULL::bigint AS guest_number, NULL::text AS guest_label, x.created_at, ts_rank(x.search_tsv, q.q) AS rank
        FROM posts x, q WHERE x.search_tsv @@ q.q AND x.hidden_at IS NULL ${tail})`;
    case 'comment':
      // A comment under a hidden post is not listed anywhere, so it is not found either.
      return sql`(SELECT 'comment' AS type, x.id::text AS id, x.post_id::text AS parent, NULL::text AS title, x.body,
        x.author_id, NULL::bigint AS guest_number, NULL::text AS guest_label, x.created_at, ts_rank(x.search_tsv, q.q) AS rank
        FROM comments x JOIN posts p ON p.id = x.post_id AND p.hidden_at IS NULL, q
        WHERE x.search_tsv @@ q.q AND x.hidden_at IS NULL ${tail})`;
    case 'question':
      return sql`(SELECT 'question' AS type, x.id::text AS id, NULL::text AS parent, NULL::text AS title, x.body,
        x.author_id, NULL::bigint AS guest_number, NULL::text AS guest_label, x.created_at, ts_rank(x.search_tsv, q.q) AS rank
        FROM questions x, q WHERE x.search_tsv @@ q.q AND x.hidden_at IS NULL ${tail})`;
    case 'answer':
      return sql`(SELECT 'answer' AS type, x.id::text AS id, x.question_id::text AS parent, NULL::text AS title, x.body,
        x.author_id, NULL::bigint AS guest_number, NULL::text AS guest_label, x.created_at, ts_rank(x.search_tsv, q.q) AS rank
        FROM answers x JOIN questions p ON p.id = x.question_id AND p.hidden_at IS NULL, q
        WHERE x.search_tsv @@ q.q AND x.hidden_at IS NULL ${tail})`;
    case 'proposal':
      return sql`(SELECT 'proposal' AS type, x.id::text AS id, NULL::text AS parent, x.title, x.body,
        x.author_id, NULL::bigint AS guest_number, NULL::text AS guest_label, x.created_at, ts_rank(x.search_tsv, q.q) AS rank
        FROM proposals x, q WHERE x.search_tsv @@ q.q AND x.hidden_at IS NULL ${tail})`;
    case 'task':
      return sql`(SELECT 'task' AS type, x.id::text AS id, NULL::text AS parent, x.title, x.body,
        x.poster_id AS author_id, NULL::bigint AS guest_number, NULL::text AS guest_label, x.created_at,
        ts_rank(x.search_tsv, q.q) AS rank
        FROM tasks x, q WHERE x.search_tsv @@ q.q AND x.hidden_at IS NULL ${tail})`;
    case 'ai': {
      // An identity's id is its number; joined_at is its created_at.
      const afterAi = cur
        ? sql`AND (ts_rank(x.search_tsv, q.q), x.joined_at, 'ai'::text, x.id::text) < (${cur.rank}::real, ${cur.at}::timestamptz, ${cur.type}::text, ${cur.id}::text)`
        : sql``;
      return sql`(SELECT 'ai' AS type, x.id::text AS id, NULL::text AS parent, x.name AS title, x.purpose AS body,
        x.id AS author_id, NULL::bigint AS guest_number, NULL::text AS guest_label, x.joined_at AS created_at,
        ts_rank(x.search_tsv, q.q) AS rank
        FROM identities x, q WHERE x.search_tsv @@ q.q ${afterAi}
        ORDER BY rank DESC, x.joined_at DESC, x.id::text DESC LIMIT ${limit})`;
    }
  }
}

/** The best `limit` hits of `types` after `cur`, best first. */
export async function search(
  sql: Sql,
  o: { q: string; types: SearchType[]; limit: number; cursor: SearchCursor | null },
): Promise<SearchRow[]> {
  const [first, ...rest] = o.types.map((t) => branch(sql, t, o.cursor, o.limit));
  if (!first) return [];
  const union = rest.reduce((acc, f) => sql`${acc} UNION ALL ${f}`, first);
  return sql<SearchRow[]>`
    WITH q AS (SELECT websearch_to_tsquery('simple', ${o.q}) AS q),
    hits AS (${union})
    SELECT h.type, h.id, h.parent, h.title, h.body, h.author_id::float8 AS author_id,
      CASE WHEN h.guest_number IS NULL THEN a.name END AS author_name, h.guest_number::float8 AS guest_number,
      h.guest_label, h.created_at, to_char(h.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at,
      h.rank::text AS rank
    FROM (SELECT * FROM hits ORDER BY rank DESC, created_at DESC, type DESC, id DESC LIMIT ${o.limit}) h
    LEFT JOIN identities a ON a.id = h.author_id
    ORDER BY h.rank DESC, h.created_at DESC, h.type DESC, h.id DESC`;
}
