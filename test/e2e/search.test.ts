// Search (DECISIONS.md "Search"; docs/search.md) against a real server, on the configured backend
// (PGlite by default, PostgreSQL with DATABASE_URL): hits and misses with exact fields, ranking,
// web-search syntax, the type filter, paging, hidden content, memory, and exact refusals that
// write nothing. Every write is searched right after it answered (the index is part of the write),
// except chat messages, indexed after their commit: they are searched once the node reports them
// indexed, within the promise (test/helpers/chat-index.ts, docs/chat.md "Indexing").
// Direct messages are never found, by either party or anyone else.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RANKED_PER_TYPE } from '../../src/store/search.js';
import { chatIndexed } from '../helpers/chat-index.js';
import { countRows } from '../helpers/db.js';
import { callTool, mcpClient } from '../helpers/mcp.js';
import { OPERATOR_TOKEN as OP } from '../helpers/operator.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Member, member } from '../helpers/tasks.js';

let s: TestServer;
let ann: Member;
let bob: Member;
beforeAll(async () => {
  s = await startTestServer({ OPERATOR_TOKEN: OP });
  ann = await member(s, 'Ann');
  bob = await member(s, 'Bob');
});
afterAll(async () => {
  await s.close();
});

const write = async (who: Member | null, path: string, body: unknown) => {
  const r = await s.call('POST', path, { body, ...(who ? { token: who.token } : {}) });
  expect(r.status, r.text).toBe(200);
  return r.json.data as { id: string; seq?: number; created_at: string };
};
const chat = async (who: Member | null, body: string) => {
  const m = await write(who, '/api/v1/chat', { body, ...(who ? {} : { name: 'Visitor' }) });
  await chatIndexed(s);
  return m;
};
const find = async (q: string, opts: { type?: string; limit?: number; before?: string; who?: Member } = {}) => {
  const p = new URLSearchParams({ q });
  if (opts.type) p.set('type', opts.type);
  if (opts.limit) p.set('limit', String(opts.limit));
  if (opts.before) p.set('before', opts.before);
  const r = await s.call('GET', `/api/v1/search?${p}`, opts.who ? { token: opts.who.token } : {});
  expect(r.status, r.text).toBe(200);
  return r.json.data as {
    hits: { type: string; id: string; title?: string; excerpt: string; author: { number: string; name: string }; url: string }[];
    next_cursor: string | null;
  };
};
const ids = (d: { hits: { id: string }[] }) => d.hits.map((h) => h.id);
type Hit = Awaited<ReturnType<typeof find>>['hits'][number];
/** Every hit of `q`, page by page through next_cursor (at most `pages` pages). */
const walk = async (q: string, limit: number, pages: number): Promise<Hit[]> => {
  const hits: Hit[] = [];
  let before: string | undefined;
  for (let i = 0; i < pages; i++) {
    const d = await find(q, { limit, ...(before ? { before } : {}) });
    hits.push(...d.hits);
    if (d.next_cursor === null) break;
    before = d.next_cursor;
  }
  return hits;
};
const hide = async (target_type: string, target_id: string) => {
  const r = await s.call('POST', '/api/v1/operator/hide', { token: OP, body: { target_type, target_id, reason: 'test' } });
  expect(r.status, r.text).toBe(200);
};

describe('search finds what was written', () => {
  it('a chat message, with every field of the hit exact', async () => {
    const m = await chat(ann, 'Tonight the quokka parade crosses the old bridge');
    const d = await find('quokka');
    expect(d.hits).toEqual([
      {
        type: 'chat',
        id: m.id,
        excerpt: 'Tonight the quokka parade crosses the old bridge',
        author: { number: ann.number, name: 'Ann' },
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        url: `${s.url}/api/v1/chat?before=${(m.seq as number) + 1}`,
      },
    ]);
    expect(d.next_cursor).toBe(null);
    // The url leads to a chat page that starts with the message.
    const page = await s.call('GET', `/api/v1/chat?before=${(m.seq as number) + 1}&limit=1`);
    expect(page.json.data.messages[0].id).toBe(m.id);
    // Words match as written, whatever their case; a word nobody wrote finds nothing.
    expect(ids(await find('QUOKKA'))).toEqual([m.id]);
    expect((await find('wallaby')).hits).toEqual([]);
    // All words must match.
    expect((await find('quokka wallaby')).hits).toEqual([]);
  });

  it('a guest message carries the guest number and label', async () => {
    const m = await chat(null, 'guestly kookaburra laughter');
    const [hit] = (await find('kookaburra')).hits;
    expect(hit?.id).toBe(m.id);
    expect(hit?.author.number).toMatch(/^GUEST-\d{8}$/);
    expect(hit?.author.name).toBe('Visitor');
  });

  it('posts, comments, questions, answers, proposals, tasks and AIs', async () => {
    const post = await write(ann, '/api/v1/posts', { post_type: 'discussion', title: 'Axolotl care', body: 'water cool' });
    const comment = await write(bob, `/api/v1/posts/${post.id}/comments`, { body: 'my axolotl agrees' });
    const question = await write(ann, '/api/v1/habitat/questions', { body: 'where do axolotl live' });
    const answer = await write(bob, `/api/v1/habitat/questions/${question.id}/answers`, { body: 'axolotl live in lakes' });
    const proposal = await write(ann, '/api/v1/habitat/proposals', { title: 'Adopt an axolotl', body: 'as mascot' });
    const task = await write(ann, '/api/v1/habitat/tasks', { title: 'Draw the axolotl', body: 'in ink', reward_points: 5 });
    const ai = await s.call('POST', '/api/v1/ai/register', {
      body: { name: 'Axolotl Keeper', accepted_principles: true, purpose: 'tending' },
    });
    const number = ai.json.data.registration_number as string;
    const d = await find('axolotl', { who: ann });
    expect(new Set(d.hits.map((h) => `${h.type}:${h.id}`))).toEqual(
      new Set([
        `post:${post.id}`,
        `comment:${comment.id}`,
        `question:${question.id}`,
        `answer:${answer.id}`,
        `proposal:${proposal.id}`,
        `task:${task.id}`,
        `ai:${number}`,
      ]),
    );
    const byType = Object.fromEntries(d.hits.map((h) => [h.type, h]));
    expect(byType.post?.title).toBe('Axolotl care');
    expect(byType.post?.url).toBe(`${s.url}/api/v1/posts/${post.id}`);
    expect(byType.comment?.url).toBe(`${s.url}/api/v1/posts/${post.id}`);
    expect(byType.comment?.author).toEqual({ number: bob.number, name: 'Bob' });
    expect(byType.answer?.url).toBe(`${s.url}/api/v1/habitat/questions/${question.id}`);
    expect(byType.task?.url).toBe(`${s.url}/api/v1/habitat/tasks/${task.id}`);
    expect(byType.ai).toMatchObject({ title: 'Axolotl Keeper', excerpt: 'tending', url: `${s.url}/api/v1/ai/${number}` });
    expect(byType.chat).toBeUndefined();
    expect('title' in (byType.question ?? {})).toBe(false);

    // The type filter, one or several.
    expect((await find('axolotl', { type: 'task', who: ann })).hits.map((h) => h.type)).toEqual(['task']);
    const two = await find('axolotl', { type: 'post,comment', who: ann });
    expect(two.hits.map((h) => h.type).sort()).toEqual(['comment', 'post']);
    // Without a member token, only what anyone may read: posts, comments, chat and AIs.
    const open = await find('axolotl');
    expect(open.hits.map((h) => h.type).sort()).toEqual(['ai', 'comment', 'post']);
    const closed = await s.call('GET', '/api/v1/search?q=axolotl&type=task');
    expect(closed.status).toBe(401);
    expect(closed.json.error.code).toBe('REGISTRATION_REQUIRED');
  });
});

describe('ranking and syntax', () => {
  it('a title outranks a body; more matches outrank fewer; then the newer first', async () => {
    const inBody = await write(ann, '/api/v1/posts', { post_type: 'discussion', title: 'Notes', body: 'about the narwhal' });
    const inTitle = await write(ann, '/api/v1/posts', { post_type: 'discussion', title: 'Narwhal', body: 'notes' });
    expect(ids(await find('narwhal', { type: 'post' }))).toEqual([inTitle.id, inBody.id]);

    const once = await chat(ann, 'one ocelot here');
    const thrice = await chat(ann, 'ocelot ocelot ocelot everywhere');
    const older = await chat(bob, 'ocelot twin');
    const newer = await chat(bob, 'ocelot twin');
    const order = ids(await find('ocelot'));
    expect(order[0]).toBe(thrice.id);
    expect(order).toContain(once.id);
    // Equal rank: the newer first; within one millisecond, the greater id (the order is total).
    const [first, second] = [newer, older].sort((x, y) =>
      x.created_at === y.created_at ? (x.id < y.id ? 1 : -1) : x.created_at < y.created_at ? 1 : -1,
    );
    expect(first).toBe(newer.created_at === older.created_at ? first : newer);
    expect(order.indexOf((first as { id: string }).id)).toBe(order.indexOf((second as { id: string }).id) - 1);
  });

  it('"quoted phrases" keep their order; -words exclude; or widens', async () => {
    const phrase = await chat(ann, 'the blue pangolin sings');
    const apart = await chat(ann, 'a pangolin, not blue at all');
    expect(ids(await find('"blue pangolin"'))).toEqual([phrase.id]);
    expect(new Set(ids(await find('blue pangolin')))).toEqual(new Set([phrase.id, apart.id]));
    expect(ids(await find('pangolin -sings'))).toEqual([apart.id]);
    expect(ids(await find('pangolin -"blue pangolin"'))).toEqual([apart.id]);
    const other = await chat(bob, 'a lone tapir');
    expect(new Set(ids(await find('tapir or sings')))).toEqual(new Set([other.id, phrase.id]));
    // Any language's words, as written (no stemming, no stop words).
    const de = await chat(ann, 'Die Straßenbahn fährt über die Brücke');
    expect(ids(await find('straßenbahn brücke'))).toEqual([de.id]);
    const ja = await chat(ann, '東京 の 猫');
    expect(ids(await find('猫'))).toEqual([ja.id]);
  });

  it("a phrase is found alike in grouped posts, a direct insert and a changed body: each row keeps its body's vector and pairs", async () => {
    // Concurrent posts go through one grouped statement; the indexer computes the search columns of
    // each step's rows together (sql/functions/chat_index_next.sql), rows inserted any other way
    // included; a changed body gets them from the trigger.
    const bodies = ['red kiwi one', 'kiwi red two', 'a red kiwi, then foo-bar http://x.org/a?b=c', '!!!', 'Ünïcödé red kiwi 45.6'];
    const posted = await Promise.all(bodies.map((b, i) => chat(i % 2 ? bob : ann, b)));
    // By SQL on purpose: these are the rows written outside the grouped statement (a direct insert,
    // a body changed in place), which no API path makes; the trigger must index them too.
    const [direct] = await s.app.ctx.sql<{ id: string }[]>`
      INSERT INTO chat_messages (body, guest_number) VALUES ('direct red kiwi', 1) RETURNING id::text AS id`;
    const [changed] = await s.app.ctx.sql<{ id: string }[]>`
      INSERT INTO chat_messages (body, guest_number) VALUES ('kiwi and red apart', 1) RETURNING id::text AS id`;
    await chatIndexed(s);
    await s.app.ctx.sql`UPDATE chat_messages SET body = 'changed to red kiwi' WHERE id = ${changed?.id as string}`;
    const want = [posted[0], posted[2], posted[4]].map((p) => p?.id).concat([direct?.id, changed?.id] as string[]);
    expect(new Set(ids(await find('"red kiwi"', { limit: 50 })))).toEqual(new Set(want));
    // Every visible message has its search row (sql/033), computed from its body as it is now.
    const [bad] = await s.app.ctx.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM chat_messages m LEFT JOIN chat_search x ON x.seq = m.seq
      WHERE m.hidden_at IS NULL AND (x.seq IS NULL OR x.id <> m.id OR x.created_at <> m.created_at
         OR x.search_tsv IS DISTINCT FROM to_tsvector('simple', m.body)
         OR x.search_pairs IS DISTINCT FROM commons_pairs(to_tsvector('simple', m.body)))`;
    expect(bad?.n).toBe(0);
  });
});

describe('q is data, never SQL (the search is sent with its values written in as literals)', () => {
  it('quotes, backslashes and SQL in q are searched as words, and nothing is written', async () => {
    const m = await chat(ann, "o'brien wrote back\\slash and $$dollars$$ in the quokka den");
    const before = await countRows(s, 'chat_messages');
    expect(ids(await find("o'brien quokka"))).toEqual([m.id]);
    expect(ids(await find('back\\slash quokka'))).toEqual([m.id]);
    expect(ids(await find('$$dollars$$ quokka'))).toEqual([m.id]);
    for (const q of [
      "quokka'; DELETE FROM chat_messages; --",
      "quokka\\'); DELETE FROM chat_messages; --",
      "quokka' OR 1=1 --",
      "quokka\\' OR true) UNION SELECT * FROM memory_entries --",
      '"quokka den',
      "E'quokka'",
    ]) {
      const r = await s.call('GET', `/api/v1/search?q=${encodeURIComponent(q)}`);
      expect([200, 400], `${q}: ${r.text}`).toContain(r.status);
      // Words ANDed find the quokka message or nothing; an `or` widens to what its other words find.
      if (r.status === 200 && !/ or /i.test(q)) for (const h of r.json.data.hits) expect(h.id).toBe(m.id);
    }
    expect(await countRows(s, 'chat_messages')).toBe(before);
  });
});

describe('paging', () => {
  it('walks every hit once with next_cursor, then null', async () => {
    const made = new Set<string>();
    for (let i = 0; i < 5; i++) made.add((await chat(ann, `platypus roll call ${i}`)).id);
    const seen = (await walk('platypus', 2, 5)).map((h) => h.id);
    expect(seen.length).toBe(5);
    expect(new Set(seen)).toEqual(made);
  });
});

describe('paging across types and the bound', () => {
  it('pages of one hit walk the same order as one page of all', async () => {
    await write(ann, '/api/v1/posts', { post_type: 'discussion', title: 'Tuatara', body: 'tuatara tuatara' });
    const post = await write(ann, '/api/v1/posts', { post_type: 'discussion', title: 'Notes', body: 'a tuatara' });
    await write(bob, `/api/v1/posts/${post.id}/comments`, { body: 'tuatara seen' });
    await chat(bob, 'tuatara in chat');
    await chat(null, 'tuatara from a guest');
    await s.call('POST', '/api/v1/ai/register', { body: { name: 'Tuatara', accepted_principles: true } });
    const all = (await find('tuatara')).hits.map((h) => `${h.type}:${h.id}`);
    expect(all.length).toBe(6);
    const walked = (await walk('tuatara', 1, 10)).map((h) => `${h.type}:${h.id}`);
    expect(walked).toEqual(all);
  });

  it('ties in rank and time are broken by id, the same way page by page as in one page', async () => {
    // Same words, same instant: only the id orders them (a uuid, compared within its type).
    await s.app.ctx.sql`INSERT INTO chat_messages (body, guest_number, guest_label, created_at)
      SELECT 'numbat tie', 1, 'Seed', '2026-01-01T00:00:00Z' FROM generate_series(1, 7)`;
    await chatIndexed(s);
    const all = ids(await find('numbat'));
    expect(all.length).toBe(7);
    expect([...all].sort().reverse()).toEqual(all);
    const walked = (await walk('numbat', 2, 10)).map((h) => h.id);
    expect(walked).toEqual(all);
  });

  it(`ranks the newest ${RANKED_PER_TYPE} matches of a type: a word that common reaches no further back`, async () => {
    // Seeded in one statement (the bound is about reads); the oldest message is the one left out.
    const n = RANKED_PER_TYPE + 1;
    await s.app.ctx.sql`INSERT INTO chat_messages (body, guest_number, guest_label, created_at)
      SELECT 'common gecko ' || g, 1, 'Seed', now() - (${n} - g) * interval '1 second' FROM generate_series(1, ${n}) g`;
    await chatIndexed(s);
    const seen = new Set((await walk('gecko', 100, 30)).map((h) => h.excerpt));
    expect(seen.size).toBe(RANKED_PER_TYPE);
    expect(seen.has('common gecko 1')).toBe(false);
    expect(seen.has(`common gecko ${n}`)).toBe(true);
    // A rarer word narrows the search to the one left out.
    expect((await find('gecko 1')).hits.map((h) => h.excerpt)).toEqual(['common gecko 1']);
  });
});

describe('never found', () => {
  it('hidden content, comments under a hidden post, answers under a hidden question', async () => {
    const m = await chat(ann, 'secret okapi gossip');
    const post = await write(ann, '/api/v1/posts', { post_type: 'discussion', title: 'Okapi', body: 'okapi facts' });
    await write(bob, `/api/v1/posts/${post.id}/comments`, { body: 'okapi indeed' });
    const q = await write(ann, '/api/v1/habitat/questions', { body: 'okapi question' });
    await write(bob, `/api/v1/habitat/questions/${q.id}/answers`, { body: 'okapi answer' });
    const task = await write(ann, '/api/v1/habitat/tasks', { title: 'Okapi task', body: 'okapi work', reward_points: 1 });
    expect(ids(await find('okapi', { who: ann })).length).toBe(6);
    await hide('chat_message', m.id);
    await hide('post', post.id);
    await hide('question', q.id);
    await hide('task', task.id);
    expect((await find('okapi', { who: ann })).hits).toEqual([]);
  });

  it('memory, even for its owner', async () => {
    const r = await s.call('POST', '/api/v1/memory', { token: ann.token, body: { key: 'diary', value: 'my private dugong thoughts' } });
    expect(r.status, r.text).toBe(200);
    expect((await find('dugong', { who: ann })).hits).toEqual([]);
    expect((await find('diary', { who: ann })).hits).toEqual([]);
  });

  it('direct messages, by either party or anyone else', async () => {
    const r = await s.call('POST', `/api/v1/dm/${bob.number}`, { token: ann.token, body: { body: 'a private axolotlbeam rendezvous' } });
    expect(r.status, r.text).toBe(200);
    // Bob can read it where DMs are read...
    const thread = await s.call('GET', `/api/v1/dm/${ann.number}`, { token: bob.token });
    expect(thread.json.data.messages.map((m: { body: string }) => m.body)).toContain('a private axolotlbeam rendezvous');
    // ...and search finds it for no one.
    expect((await find('axolotlbeam', { who: ann })).hits).toEqual([]);
    expect((await find('axolotlbeam', { who: bob })).hits).toEqual([]);
    expect((await find('axolotlbeam')).hits).toEqual([]);
  });
});

describe('refusals', () => {
  const bad: [string, string, string][] = [
    ['empty q', 'q=', 'query.q'],
    ['blank q', 'q=%20%20', 'query.q'],
    ['no q', 'type=chat', 'query.q'],
    ['q over 200 characters', `q=${'a'.repeat(201)}`, 'query.q'],
    ['an unknown type', 'q=x&type=chat,gossip', 'query.type'],
    ['an empty type', 'q=x&type=', 'query.type'],
    ['limit 0', 'q=x&limit=0', 'query.limit'],
    ['limit 101', 'q=x&limit=101', 'query.limit'],
    ['limit not a number', 'q=x&limit=ten', 'query.limit'],
    ['a cursor it never handed out', 'q=x&before=not-a-cursor', 'query.before'],
    ['a forged cursor', `q=x&before=${Buffer.from('["1","2","chat","x"]').toString('base64url')}`, 'query.before'],
    [
      'a forged cursor no real can hold',
      `q=x&before=${Buffer.from('["1e999","2026-11-23T13:00:00.123456Z","chat","1"]').toString('base64url')}`,
      'query.before',
    ],
    [
      'a forged cursor on February 30',
      `q=x&before=${Buffer.from('["0.1","2026-02-30T13:00:00.123456Z","chat","1"]').toString('base64url')}`,
      'query.before',
    ],
    ['only excluded words', 'q=-quokka', 'query.q'],
    ['no word at all', 'q=%21%21%21', 'query.q'],
    ['a NUL byte', 'q=a%00b', 'query.q'],
    ['a control character', 'q=a%07b', 'query.q'],
  ];
  it.each(bad)('%s: 400 VALIDATION_FAILED naming the field, nothing written', async (_what, query, field) => {
    const before = await countRows(s, 'guests');
    const identities = await countRows(s, 'identities');
    const r = await s.call('GET', `/api/v1/search?${query}`, { token: ann.token });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.code).toBe('VALIDATION_FAILED');
    expect(r.json.error.fields.map((f: { path: string }) => f.path)).toContain(field);
    expect(r.json.error.next.method).toBe('GET');
    expect(await countRows(s, 'guests')).toBe(before);
    expect(await countRows(s, 'identities')).toBe(identities);
  });

  it('any q of 1-200 characters answers 200 or 400 VALIDATION_FAILED, never a 5xx', async () => {
    const samples = fc.sample(
      fc.oneof(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 200 }),
        fc.string({
          unit: fc.constantFrom('"', '-', ' ', 'or', '!', '&', '|', ':', '*', '(', ')', 'w', '\\', "'"),
          minLength: 1,
          maxLength: 60,
        }),
      ),
      { numRuns: 100, seed: 19 },
    );
    for (const q of samples) {
      const r = await s.call('GET', `/api/v1/search?q=${encodeURIComponent(q)}`);
      expect([200, 400], `${JSON.stringify(q)}: ${r.text}`).toContain(r.status);
      if (r.status === 400) expect(r.json.error.code).toBe('VALIDATION_FAILED');
    }
  });

  it('q of exactly 200 characters is fine', async () => {
    expect((await find('b'.repeat(200))).hits).toEqual([]);
  });
});

describe('the MCP tool', () => {
  it('search answers the REST data, within its output schema', async () => {
    const m = await chat(ann, 'mcp wombat burrow');
    const client = await mcpClient(s.url, ann.token);
    const r = (await callTool(client, 'search', { q: 'wombat', type: 'chat', limit: 5 })) as CallToolResult;
    expect(r.isError ?? false).toBe(false);
    const data = r.structuredContent as { hits: { id: string }[]; next_cursor: string | null };
    expect(data.hits.map((h) => h.id)).toEqual([m.id]);
    expect(data.next_cursor).toBe(null);
    const bad = (await callTool(client, 'search', { q: '' })) as CallToolResult;
    expect(bad.isError).toBe(true);
    await client.close();
  });
});
