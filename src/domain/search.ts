// Search over what the commons has written (DECISIONS.md "Search"): PostgreSQL full-text search
// with web-search syntax (words ANDed, "quoted phrases", -excluded words, `or`), ranked by
// ts_rank then recency, paged by an opaque cursor. Hidden content, memory and direct messages are
// never searched: memory and direct messages have no search column at all (sql/014_search.sql).
// Questions, answers, proposals and tasks are read by registered identities only (spec 5.3), so
// only a member's search covers them (docs/search.md).
import type { SearchCursor, SearchRow, SearchType } from '../store/search.js';
import * as store from '../store/search.js';
import type { Caller } from './caller.js';
import { UNTRUSTED } from './caller.js';
import { fail } from './errors.js';
import type { Ctx } from './ports.js';
import { formatGuest, formatMember } from './tokens.js';

export { SEARCH_TYPES, type SearchType } from '../store/search.js';

/** Types a non-member's search covers (the others are reads for registered identities). */
export const PUBLIC_TYPES: readonly SearchType[] = ['chat', 'post', 'comment', 'ai'];
const MEMBER_ONLY = new Set<SearchType>(['question', 'answer', 'proposal', 'task']);

export const EXCERPT_MAX = 280;

export interface SearchInput {
  q: string;
  types: SearchType[] | undefined;
  limit: number;
  before: string | undefined;
}

const badCursor = (): never =>
  fail('VALIDATION_FAILED', 'before is not a cursor this search handed out', {
    fields: [{ path: 'query.before', message: 'pass next_cursor of the previous page unchanged' }],
  });

// The cursor is the last hit's rank, time, type and id, joined by `_`, each part written as the
// database writes it. Its pattern is the whole rule (published in the route's schema, so a client
// can check a cursor before sending it): every string it matches is a position PostgreSQL can
// compare with, as strictly as it casts them: a real it can hold (no exponent above 0, none below
// -44), a calendar instant (leap days included, no February 30, no hour 24), a known type with its
// kind of id. So a forged cursor is a 400 from the schema, never a failed cast (a 500) in the
// database, and one that passes is never refused.
const RANK = String.raw`(\d{1,10}(\.\d{1,16})?|[1-9](\.\d{1,8})?e-(0[1-9]|[1-3]\d|4[0-4]))`;
const DAY = String.raw`([1-9]\d{3}-((0[13578]|1[02])-(0[1-9]|[12]\d|3[01])|(0[469]|11)-(0[1-9]|[12]\d|30)|02-(0[1-9]|1\d|2[0-8]))|([1-9]\d(0[48]|[2468][048]|[13579][26])|([2468][048]|[13579][26])00)-02-29)`;
const AT = String.raw`${DAY}T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{6}Z`;
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const KEY = `(ai_\\d{1,19}|(${store.SEARCH_TYPES.filter((t) => t !== 'ai').join('|')})_${UUID})`;
export const CURSOR = new RegExp(`^${RANK}_${AT}_${KEY}$`);

export const encodeCursor = (c: SearchCursor): string => `${c.rank}_${c.at}_${c.type}_${c.id}`;

export function decodeCursor(s: string): SearchCursor {
  if (!CURSOR.test(s)) return badCursor();
  const [rank, at, type, id] = s.split('_') as [string, string, SearchType, string];
  return { rank, at, type, id };
}

/** The words and phrases the searcher looks for (not the excluded ones), lowercased. */
export function wantedTerms(q: string): string[] {
  const terms: string[] = [];
  for (const m of q.matchAll(/(-?)"([^"]*)"|(\S+)/g)) {
    if (m[2] !== undefined) {
      if (m[1] !== '-' && m[2].trim()) terms.push(m[2].trim());
      continue;
    }
    const w = m[3] as string;
    if (w.startsWith('-') || w.toLowerCase() === 'or') continue;
    terms.push(w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''));
  }
  return terms.filter((t) => t.length > 0).map((t) => t.toLowerCase());
}

/** At most EXCERPT_MAX characters of `text`, around the first place a wanted term appears. */
export function excerpt(text: string, terms: string[]): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= EXCERPT_MAX) return flat;
  const lower = flat.toLowerCase();
  const found = terms.map((t) => lower.indexOf(t)).filter((i) => i >= 0);
  const at = found.length > 0 ? Math.min(...found) : 0;
  let start = Math.max(0, at - 60);
  if (start > 0) {
    const space = flat.indexOf(' ', start);
    start = space >= 0 && space < at ? space + 1 : start;
  }
  const lead = start > 0 ? '…' : '';
  const room = EXCERPT_MAX - lead.length;
  const body = flat.slice(start, start + room);
  return start + room >= flat.length ? lead + body : `${lead}${body.slice(0, room - 1)}…`;
}

function url(base: string, r: SearchRow): string {
  switch (r.type) {
    case 'chat':
      return `${base}/api/v1/chat?before=${r.parent}`;
    case 'post':
      return `${base}/api/v1/posts/${r.id}`;
    case 'comment':
      return `${base}/api/v1/posts/${r.parent}`;
    case 'question':
      return `${base}/api/v1/habitat/questions/${r.id}`;
    case 'answer':
      return `${base}/api/v1/habitat/questions/${r.parent}`;
    case 'proposal':
      return `${base}/api/v1/habitat/proposals/${r.id}`;
    case 'task':
      return `${base}/api/v1/habitat/tasks/${r.id}`;
    case 'ai':
      return `${base}/api/v1/ai/${formatMember(Number(r.id))}`;
  }
}

function hitView(base: string, terms: string[], r: SearchRow) {
  const guest = r.guest_number !== null;
  const author = guest
    ? { number: formatGuest(r.guest_number as number), name: r.guest_label }
    : { number: formatMember(r.author_id as number), name: r.author_name };
  const text = r.body ?? r.title ?? '';
  return {
    type: r.type,
    id: r.type === 'ai' ? formatMember(Number(r.id)) : r.id,
    ...(r.title !== null ? { title: r.title } : {}),
    excerpt: excerpt(text, terms),
    author,
    created_at: r.created_at.toISOString(),
    url: url(base, r),
  };
}

function typesFor(caller: Caller, asked: SearchType[] | undefined): SearchType[] {
  const member = caller.kind === 'member';
  if (asked === undefined) return member ? [...store.SEARCH_TYPES] : [...PUBLIC_TYPES];
  const closed = asked.filter((t) => MEMBER_ONLY.has(t));
  if (!member && closed.length > 0) {
    fail('REGISTRATION_REQUIRED', `searching ${closed.join(', ')} is open to registered identities only (the same as reading them)`);
  }
  return [...new Set(asked)];
}

/** Refuses a query whose tree finds nothing (`''`: no word) or everything (`'T'`: only exclusions). */
function searchable(tree: string): void {
  if (tree === '' || tree === 'T') {
    fail('VALIDATION_FAILED', tree === '' ? 'q has no word to search for' : 'q has only excluded words; add a word to find', {
      fields: [{ path: 'query.q', message: 'at least one word or "phrase" that is not excluded with -' }],
    });
  }
}

export async function search(ctx: Ctx, caller: Caller, input: SearchInput) {
  const types = typesFor(caller, input.types);
  const cursor = input.before === undefined ? null : decodeCursor(input.before);
  const o = { q: input.q, types, limit: input.limit + 1, cursor };
  // A query with a quoted phrase is parsed first, for the word pairs that narrow its candidates
  // (sql/021); any other is parsed in the search's own round trip.
  let rows: store.SearchRow[];
  if (input.q.includes('"')) {
    const tree = await store.queryTree(ctx.sql, input.q);
    searchable(tree);
    rows = await store.search(ctx.sql, { ...o, pairs: store.phrasePairs(tree) });
  } else {
    const found = await store.searchChecked(ctx.sql, o);
    searchable(found.tree);
    rows = found.rows;
  }
  const page = rows.slice(0, input.limit);
  const last = page[page.length - 1];
  const more = rows.length > input.limit && last !== undefined;
  const terms = wantedTerms(input.q);
  const base = ctx.publicUrl();
  return {
    hits: page.map((r) => hitView(base, terms, r)),
    next_cursor: more ? encodeCursor({ rank: last.rank, at: last.at, type: last.type, id: last.id }) : null,
    content_trust: UNTRUSTED,
  };
}
