// SQL for search (DECISIONS.md "Search"; sql/014_search.sql). One statement: each searched table
// ranks its own newest matches (hidden rows are never read) and keeps its best page, then the pages
// are merged by rank, then recency; authors are joined for the final page only.
import type { PendingQuery, Row, Sql } from 'postgres';
import type { Tx } from './ledger.js';

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

/** Matches ranked per type: the newest this many. A word found in most messages would otherwise
 * make every search for it read and rank them all (docs/search.md "Bounds"); the newest matches of
 * a word that common are the ones worth reading, and a rarer word or a phrase narrows the search. */
export const RANKED_PER_TYPE = 2000;

/**
 * The adjacent word pairs a query's phrases require (`"blue pangolin"` -> `blue pangolin`), read from
 * its query tree, for the chat's pair index (sql/021_search_pairs.sql). Empty when the tree has an
 * OR or a NOT anywhere (a pair would then not be required of every match) or no phrase.
 */
export function phrasePairs(tree: string): string[] {
  const tokens = tree.match(/'(?:[^']|'')*'|<->|<\d+>|[&|!()]/g) ?? [];
  if (tokens.some((t) => t === '|' || t === '!')) return [];
  const pairs = new Set<string>();
  for (let i = 0; i + 2 < tokens.length; i++) {
    const [a, op, b] = [tokens[i] as string, tokens[i + 1], tokens[i + 2] as string];
    if (op === '<->' && a.startsWith("'") && b.startsWith("'")) pairs.add(`${unquote(a)} ${unquote(b)}`);
  }
  return [...pairs];
}

const unquote = (lexeme: string): string => lexeme.slice(1, -1).replaceAll("''", "'");

// The candidates of one type: its newest matching visible rows, ranked, as narrow rows (the key the
// page is read back by, created_at, rank): the sorts carry no body, and only the page's rows are read
// in full (page() below). The GIN index finds a moderate word's rows; for a common word the planner
// walks the newest rows instead and stops at the bound. The rank is computed as each row is read, so
// no search vector is carried through the sort by seq either.
function candidates(sql: Sql, type: SearchType, tsq: Frag, pairs: string[]): Frag {
  const cap = RANKED_PER_TYPE;
  const rank = sql`ts_rank(x.search_tsv, ${tsq}) AS rank`;
  switch (type) {
    case 'chat': {
      // A phrase's word pairs narrow the candidates through their own index (sql/021).
      const paired = pairs.length > 0 ? sql`AND x.search_pairs @> ${pairs}::text[]` : sql``;
      return sql`SELECT x.id AS key, x.created_at, ${rank}
        FROM chat_messages x WHERE x.search_tsv @@ ${tsq} ${paired} AND x.hidden_at IS NULL ORDER BY x.seq DESC LIMIT ${cap}`;
    }
    case 'post':
    case 'proposal':
    case 'question':
    case 'task':
      return sql`SELECT x.id AS key, x.created_at, ${rank}
        FROM ${sql(TABLES[type])} x WHERE x.search_tsv @@ ${tsq} AND x.hidden_at IS NULL ORDER BY x.seq DESC LIMIT ${cap}`;
    case 'comment':
      // A comment under a hidden post is listed nowhere, so it is not found either (nor an answer
      // under a hidden question).
      return sql`SELECT x.id AS key, x.created_at, ${rank}
        FROM comments x JOIN posts p ON p.id = x.post_id AND p.hidden_at IS NULL
        WHERE x.search_tsv @@ ${tsq} AND x.hidden_at IS NULL ORDER BY x.seq DESC LIMIT ${cap}`;
    case 'answer':
      return sql`SELECT x.id AS key, x.created_at, ${rank}
        FROM answers x JOIN questions p ON p.id = x.question_id AND p.hidden_at IS NULL
        WHERE x.search_tsv @@ ${tsq} AND x.hidden_at IS NULL ORDER BY x.seq DESC LIMIT ${cap}`;
    case 'ai':
      // Identities are never hidden; an identity's id is its number, joined_at its created_at.
      return sql`SELECT x.id AS key, x.joined_at AS created_at, ${rank}
        FROM identities x WHERE x.search_tsv @@ ${tsq} ORDER BY x.id DESC LIMIT ${cap}`;
  }
}

const TABLES = {
  chat: 'chat_messages',
  post: 'posts',
  comment: 'comments',
  question: 'questions',
  answer: 'answers',
  proposal: 'proposals',
  task: 'tasks',
  ai: 'identities',
} as const satisfies Record<SearchType, string>;

// A page row's columns, read from its table `x` by key, uniform across types.
function columns(sql: Sql, type: SearchType): Frag {
  switch (type) {
    case 'chat':
      // parent: the chat page cursor that starts with this message (newest first before seq + 1).
      return sql`x.id::text AS id, (x.seq + 1)::text AS parent, NULL::text AS title, x.body, x.author_id,
        x.guest_number, x.guest_label`;
    case 'post':
    case 'proposal':
      return sql`x.id::text AS id, NULL::text AS parent, x.title, x.body, x.author_id,
        NULL::bigint AS guest_number, NULL::text AS guest_label`;
    case 'question':
      return sql`x.id::text AS id, NULL::text AS parent, NULL::text AS title, x.body, x.author_id,
        NULL::bigint AS guest_number, NULL::text AS guest_label`;
    case 'comment':
      return sql`x.id::text AS id, x.post_id::text AS parent, NULL::text AS title, x.body, x.author_id,
        NULL::bigint AS guest_number, NULL::text AS guest_label`;
    case 'answer':
      return sql`x.id::text AS id, x.question_id::text AS parent, NULL::text AS title, x.body, x.author_id,
        NULL::bigint AS guest_number, NULL::text AS guest_label`;
    case 'task':
      return sql`x.id::text AS id, NULL::text AS parent, x.title, x.body, x.poster_id AS author_id,
        NULL::bigint AS guest_number, NULL::text AS guest_label`;
    case 'ai':
      return sql`x.id::text AS id, NULL::text AS parent, x.name AS title, x.purpose AS body, x.id AS author_id,
        NULL::bigint AS guest_number, NULL::text AS guest_label`;
  }
}

// One type's best `limit` after the cursor, in the search order, then read in full by key. The
// merged order compares ids as text (an identity's is a number); within one type a uuid key is
// compared as itself: its text is fixed-width lowercase hex, so both orders agree, and no text is
// made of every candidate (about a tenth of a middling word's search on PGlite).
function branch(sql: Sql, type: SearchType, tsq: Frag, pairs: string[], cur: SearchCursor | null, limit: number): Frag {
  const key = type === 'ai' ? sql`c.key::text` : sql`c.key`;
  const after = !cur
    ? sql``
    : cur.type === type
      ? sql`WHERE (c.rank, c.created_at, ${key}) < (${cur.rank}::real, ${cur.at}::timestamptz, ${type === 'ai' ? sql`${cur.id}::text` : sql`${cur.id}::uuid`})`
      : sql`WHERE (c.rank, c.created_at, ${type}::text) < (${cur.rank}::real, ${cur.at}::timestamptz, ${cur.type}::text)`;
  return sql`(SELECT ${type}::text AS type, ${columns(sql, type)}, p.created_at, p.rank
    FROM (SELECT c.key, c.created_at, c.rank FROM (${candidates(sql, type, tsq, pairs)}) c
      ${after}
      ORDER BY c.rank DESC, c.created_at DESC, ${key} DESC LIMIT ${limit}) p
    JOIN ${sql(TABLES[type])} x ON x.id = p.key)`;
}

/** The best `limit` hits of `types` after `cur`, best first. */
export async function search(
  sql: Sql,
  o: { q: string; types: SearchType[]; limit: number; cursor: SearchCursor | null; pairs?: string[] },
): Promise<SearchRow[]> {
  return (await searchTree(sql, o, false)).rows;
}

/**
 * The search and the query's tree (`queryTree`) in the same round trip, for a query whose phrases
 * need no pair narrowing: when the tree is `''` or `'T'` the search reads nothing (its filter is
 * a constant the planner folds), and the caller refuses the query by its tree.
 */
export function searchChecked(
  sql: Sql,
  o: { q: string; types: SearchType[]; limit: number; cursor: SearchCursor | null },
): Promise<{ tree: string; rows: SearchRow[] }> {
  return searchTree(sql, o, true);
}

async function searchTree(
  sql: Sql,
  o: { q: string; types: SearchType[]; limit: number; cursor: SearchCursor | null; pairs?: string[] },
  checked: boolean,
): Promise<{ tree: string; rows: SearchRow[] }> {
  // The query inline (not a CTE) so the planner sees its words and their frequencies.
  const tsq = sql`websearch_to_tsquery('simple', ${o.q})`;
  const [first, ...rest] = o.types.map((t) => branch(sql, t, tsq, o.pairs ?? [], o.cursor, o.limit));
  if (!first) return { tree: checked ? await queryTree(sql, o.q) : '', rows: [] };
  const union = rest.reduce((acc, f) => sql`${acc} UNION ALL ${f}`, first);
  const gate = checked ? sql`WHERE querytree(${tsq})::text NOT IN ('', 'T')` : sql``;
  // One round trip: a read-only transaction (the settings below end with it), the settings, the
  // search and the commit are sent together on one reserved connection. PGlite serves one
  // connection, so every round trip a search holds it for delays the searches queued behind. The
  // start with its settings, and the end, are one simple-protocol message each (constant text, no
  // parameters): PGlite's socket server runs each protocol message as a call of its own.
  const c = await sql.reserve();
  try {
    const tree = checked ? c<{ tree: string }[]>`SELECT querytree(${tsq})::text AS tree` : Promise.resolve([]);
    const done = await Promise.allSettled([c.unsafe(BEGIN).simple(), tree, rows(c, union, o.limit, gate), c.unsafe('COMMIT').simple()]);
    const failed = done.find((d) => d.status === 'rejected');
    if (failed) throw failed.reason;
    const [t] = (done[1] as PromiseFulfilledResult<{ tree: string }[]>).value;
    return { tree: t?.tree ?? '', rows: (done[2] as PromiseFulfilledResult<SearchRow[]>).value };
  } finally {
    c.release();
  }
}

// How a search is planned (docs/search.md "Bounds"), for its own transaction only:
// - for this query's words every time: a generic plan (what a prepared statement gets after a few
//   runs) cannot tell a rare word, best found through the GIN index, from a common one, best found
//   by walking the newest rows, and reads tens of thousands of rows for the latter;
// - with a page costing about what reading a few rows does: the pages a search reads are in memory
//   (PGlite holds the database in memory; a server's hot tables are cached). With the default page
//   costs (a disk's), the planner walked the newest rows for words matching 3,000-7,000 of 100,000
//   messages, at up to twice the cost of reading their matches through the index.
const BEGIN = `BEGIN READ ONLY; SELECT set_config('plan_cache_mode', 'force_custom_plan', true),
  set_config('seq_page_cost', '0.1', true), set_config('random_page_cost', '0.1', true)`;

function rows(tx: Tx, union: Frag, limit: number, gate: Frag): Promise<SearchRow[]> {
  return tx<SearchRow[]>`
    WITH hits AS (${union})
    SELECT h.type, h.id, h.parent, h.title, h.body, h.author_id::float8 AS author_id,
      CASE WHEN h.guest_number IS NULL THEN a.name END AS author_name, h.guest_number::float8 AS guest_number,
      h.guest_label, h.created_at, to_char(h.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at,
      h.rank::text AS rank
    FROM (SELECT * FROM hits ORDER BY rank DESC, created_at DESC, type DESC, id DESC LIMIT ${limit}) h
    LEFT JOIN identities a ON a.id = h.author_id
    ${gate}
    ORDER BY h.rank DESC, h.created_at DESC, h.type DESC, h.id DESC`;
}
