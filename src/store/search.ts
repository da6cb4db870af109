// SQL for search (DECISIONS.md "Search"; sql/014_search.sql). One statement: each searched table
// ranks its own newest matches (hidden rows are never read) and keeps its best page, then the pages
// are merged by rank, then recency; authors are joined for the final page only.
import type { Row, Sql } from 'postgres';

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
  const [row] = (await sql.unsafe(treeOf(tsqueryOf(q))).simple()) as unknown as { tree: string }[];
  return row?.tree ?? '';
}

// The query's tsquery and its tree, as SQL text with the query written in (`literal`).
const tsqueryOf = (q: string): string => `websearch_to_tsquery('simple', ${literal(q)})`;
const treeOf = (tsq: string): string => `SELECT querytree(${tsq})::text AS tree`;

/**
 * A text value as an SQL literal, for a search sent as one simple-protocol message (searchTree
 * below): an escape string constant, `E'...'`, which reads the same whatever
 * standard_conforming_strings says, with its quote doubled and its backslash escaped. UTF-8 never
 * puts those two bytes inside another character. A NUL cannot be sent at all (the route refuses
 * control characters before this).
 */
export function literal(s: string): string {
  if (s.includes('\0')) throw new Error('a NUL cannot be sent to PostgreSQL');
  return `E'${s.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

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
// in full (branch() below). The GIN index finds a moderate word's rows; for a common word the planner
// walks the newest rows instead and stops at the bound. The rank is computed as each row is read, so
// no search vector is carried through the sort by seq either. `tsq` is SQL text (searchTree).
function candidates(type: SearchType, tsq: string, pairs: string[]): string {
  const cap = RANKED_PER_TYPE;
  const rank = `ts_rank(x.search_tsv, ${tsq}) AS rank`;
  switch (type) {
    case 'chat': {
      // A message's search row is written by the chat indexer and deleted when it is hidden
      // (sql/033). A phrase's word pairs narrow the candidates through their own index (sql/021),
      // alone: the rows holding the pairs are read (a fence, OFFSET 0, keeps the planner from also
      // reading the words' index and intersecting the two, which costs more than the pairs' rows:
      // a phrase of common words, 800 of 100,000 rows, 2.3 against 5.1 ms), and the phrase test on
      // the vector judges each.
      if (pairs.length > 0) {
        return `SELECT x.id AS key, x.created_at, ${rank}
        FROM (SELECT p.seq, p.id, p.created_at, p.search_tsv FROM chat_search p
          WHERE p.search_pairs @> ARRAY[${pairs.map(literal).join(', ')}]::text[] OFFSET 0) x
        WHERE x.search_tsv @@ ${tsq} ORDER BY x.seq DESC LIMIT ${cap}`;
      }
      return `SELECT x.id AS key, x.created_at, ${rank}
        FROM chat_search x WHERE x.search_tsv @@ ${tsq} ORDER BY x.seq DESC LIMIT ${cap}`;
    }
    case 'post':
    case 'proposal':
    case 'question':
    case 'task':
      return `SELECT x.id AS key, x.created_at, ${rank}
        FROM ${TABLES[type]} x WHERE x.search_tsv @@ ${tsq} AND x.hidden_at IS NULL ORDER BY x.seq DESC LIMIT ${cap}`;
    case 'comment':
      // A comment under a hidden post is listed nowhere, so it is not found either (nor an answer
      // under a hidden question).
      return `SELECT x.id AS key, x.created_at, ${rank}
        FROM comments x JOIN posts p ON p.id = x.post_id AND p.hidden_at IS NULL
        WHERE x.search_tsv @@ ${tsq} AND x.hidden_at IS NULL ORDER BY x.seq DESC LIMIT ${cap}`;
    case 'answer':
      return `SELECT x.id AS key, x.created_at, ${rank}
        FROM answers x JOIN questions p ON p.id = x.question_id AND p.hidden_at IS NULL
        WHERE x.search_tsv @@ ${tsq} AND x.hidden_at IS NULL ORDER BY x.seq DESC LIMIT ${cap}`;
    case 'ai':
      // Identities are never hidden; an identity's id is its number, joined_at its created_at.
      return `SELECT x.id AS key, x.joined_at AS created_at, ${rank}
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
const columns = (parent: string, title: string, body: string, author: string, [number, label] = ['NULL::bigint', 'NULL::text']): string =>
  `x.id::text AS id, ${parent}::text AS parent, ${title}::text AS title, ${body} AS body, ${author} AS author_id,
        ${number} AS guest_number, ${label} AS guest_label`;
const COLUMNS = {
  // parent: the chat page cursor that starts with this message (newest first before seq + 1).
  chat: columns('(x.seq + 1)', 'NULL', 'x.body', 'x.author_id', ['x.guest_number', 'x.guest_label']),
  post: columns('NULL', 'x.title', 'x.body', 'x.author_id'),
  proposal: columns('NULL', 'x.title', 'x.body', 'x.author_id'),
  question: columns('NULL', 'NULL', 'x.body', 'x.author_id'),
  comment: columns('x.post_id', 'NULL', 'x.body', 'x.author_id'),
  answer: columns('x.question_id', 'NULL', 'x.body', 'x.author_id'),
  task: columns('NULL', 'x.title', 'x.body', 'x.poster_id'),
  ai: columns('NULL', 'x.name', 'x.purpose', 'x.id'),
} as const satisfies Record<SearchType, string>;

// One type's best `limit` after the cursor, in the search order, then read in full by key. The
// merged order compares ids as text (an identity's is a number); within one type a uuid key is
// compared as itself: its text is fixed-width lowercase hex, so both orders agree, and no text is
// made of every candidate (about a tenth of a middling word's search on PGlite).
function branch(type: SearchType, tsq: string, pairs: string[], cur: SearchCursor | null, limit: number): string {
  const key = type === 'ai' ? 'c.key::text' : 'c.key';
  const rank = cur && `${literal(cur.rank)}::real, ${literal(cur.at)}::timestamptz`;
  const after = !cur
    ? ''
    : cur.type === type
      ? `WHERE (c.rank, c.created_at, ${key}) < (${rank}, ${literal(cur.id)}::${type === 'ai' ? 'text' : 'uuid'})`
      : `WHERE (c.rank, c.created_at, ${literal(type)}::text) < (${rank}, ${literal(cur.type)}::text)`;
  return `(SELECT ${literal(type)}::text AS type, ${COLUMNS[type]}, p.created_at, p.rank
    FROM (SELECT c.key, c.created_at, c.rank FROM (${candidates(type, tsq, pairs)}) c
      ${after}
      ORDER BY c.rank DESC, c.created_at DESC, ${key} DESC LIMIT ${limit}) p
    JOIN ${TABLES[type]} x ON x.id = p.key)`;
}

interface SearchOptions {
  q: string;
  types: SearchType[];
  limit: number;
  cursor: SearchCursor | null;
  pairs?: string[];
}

/** The best `limit` hits of `types` after `cur`, best first. */
export async function search(sql: Sql, o: SearchOptions): Promise<SearchRow[]> {
  return (await searchTree(sql, o, false)).rows;
}

/**
 * The search and the query's tree (`queryTree`) in the same message, for a query whose phrases
 * need no pair narrowing: when the tree is `''` or `'T'` the search reads nothing (its filter is
 * a constant the planner folds), and the caller refuses the query by its tree.
 */
export function searchChecked(sql: Sql, o: Omit<SearchOptions, 'pairs'>): Promise<{ tree: string; rows: SearchRow[] }> {
  return searchTree(sql, o, true);
}

// A search is one simple-protocol message: its settings, the query's tree when asked, and the
// search, run by PostgreSQL as one implicit transaction (the settings end with it, also when a
// statement fails). Its values are written into the text as literals (`literal`), so:
// - every search is planned for its own words, the planner reading the actual query: a prepared
//   statement's generic plan cannot tell a rare word, best found through the GIN index, from a
//   common one, best found by walking the newest rows, and reads tens of thousands of rows for
//   the latter;
// - it takes no reserved connection and one call on PGlite: PGlite serves one connection and its
//   socket server runs each protocol message as a call of its own, so a search sent as BEGIN,
//   settings, Bind, Execute, Sync and COMMIT (nine messages with its tree) held the connection for
//   every one of them, and the next search could not be sent until the COMMIT came back
//   (docs/search.md "Bounds": 10-20% of a middling word's time).
// The settings: a page costs about what reading a few rows does, for the pages a search reads are
// in memory (PGlite holds the database in memory; a server's hot tables are cached). With the
// default page costs (a disk's) the planner walked the newest rows for words matching
// 3,000-7,000 of 100,000 messages, at up to twice the cost of reading their matches through the
// index.
const SETTINGS = 'SET LOCAL seq_page_cost = 0.1; SET LOCAL random_page_cost = 0.1; SET TRANSACTION READ ONLY';

async function searchTree(sql: Sql, o: SearchOptions, checked: boolean): Promise<{ tree: string; rows: SearchRow[] }> {
  if (!Number.isSafeInteger(o.limit) || o.limit < 1) throw new Error(`a search's limit is a positive integer, not ${o.limit}`);
  // The query inline (not a CTE) so the planner sees its words and their frequencies.
  const tsq = tsqueryOf(o.q);
  const branches = o.types.map((t) => branch(t, tsq, o.pairs ?? [], o.cursor, o.limit));
  if (branches.length === 0) return { tree: checked ? await queryTree(sql, o.q) : '', rows: [] };
  const text = [SETTINGS, ...(checked ? [treeOf(tsq)] : []), rows(branches.join(' UNION ALL '), o.limit, checked ? tsq : null)];
  const answer = (await sql.unsafe(text.join(';\n')).simple()) as unknown as Row[] | Row[][];
  // One result per statement that answers (postgres.js gives a lone result unwrapped).
  const results = (Array.isArray(answer[0]) ? answer : [answer]) as Row[][];
  const found = results.at(-1) as unknown as SearchRow[];
  const [t] = checked ? ((results.at(-2) ?? []) as { tree: string }[]) : [];
  return { tree: t?.tree ?? '', rows: found };
}

function rows(union: string, limit: number, gate: string | null): string {
  return `WITH hits AS (${union})
    SELECT h.type, h.id, h.parent, h.title, h.body, h.author_id::float8 AS author_id,
      CASE WHEN h.guest_number IS NULL THEN a.name END AS author_name, h.guest_number::float8 AS guest_number,
      h.guest_label, h.created_at, to_char(h.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at,
      h.rank::text AS rank
    FROM (SELECT * FROM hits ORDER BY rank DESC, created_at DESC, type DESC, id DESC LIMIT ${limit}) h
    LEFT JOIN identities a ON a.id = h.author_id
    ${gate ? `WHERE querytree(${gate})::text NOT IN ('', 'T')` : ''}
    ORDER BY h.rank DESC, h.created_at DESC, h.type DESC, h.id DESC`;
}
