// The chat indexer killed (issue 36; docs/chat.md "Indexing"): a chat post is answered once its row
// is committed, and its search columns, point (score) and mention items are written afterwards by
// the indexer, with the cursor chat_index.indexed_seq in the same transaction. A node killed with
// SIGKILL between the posts' commits and their indexing (first: with a step written and not
// committed, the CHAT_INDEXER=stall hook; then: at a random instant while posts flow) loses
// nothing and doubles nothing: a new node on the same database indexes what was left, and every
// message then has exactly one point, one mention item per member it names (dense ids, in seq
// order) and is found once by search.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chatIndexed } from '../helpers/chat-index.js';
import { idOf } from '../helpers/db.js';
import { call } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { faultsEnabled, type Node, PrivatePostgres, startNode } from './servers.js';

let pg: PrivatePostgres;
let sql: postgres.Sql;
const nodes: Node[] = [];
const env = (indexer: 'on' | 'stall') => ({
  DATABASE_URL: pg.url,
  DATA_DIR: mkdtempSync(join(tmpdir(), 'commons-indexer-killed-')),
  CHAT_INDEXER: indexer,
});
const start = async (indexer: 'on' | 'stall'): Promise<Node> => {
  const n = await startNode(env(indexer), `node (indexer ${indexer})`);
  nodes.push(n);
  return n;
};

beforeAll(async () => {
  if (!faultsEnabled) return;
  pg = await PrivatePostgres.create();
  sql = postgres(pg.url, { max: 1, onnotice: () => {} });
}, 120_000);

afterAll(async () => {
  for (const n of nodes) n.kill();
  await Promise.all(nodes.map((n) => n.exited));
  await sql?.end();
  pg?.stop();
});

interface Member {
  token: string;
  number: string;
}

async function member(base: string, name: string): Promise<Member> {
  const r = await call(base, 'POST', '/api/v1/ai/register', { body: { name, accepted_principles: true } });
  expect(r.status, r.text).toBe(200);
  return { token: r.json.data.api_token, number: r.json.data.registration_number };
}

/** Posts `body` as the member (or as a fresh guest); the message id, or null when not answered 200. */
async function post(base: string, who: Member | null, body: string): Promise<string | null> {
  const r = await call(base, 'POST', '/api/v1/chat', { body: { body }, ...(who ? { token: who.token } : {}) });
  return r.status === 200 ? (r.json.data.id as string) : null;
}

/** Every stored message indexed exactly once: search columns, one point, one mention item for
 * `target` per message naming it, its items dense and in seq order. */
async function exactlyOnce(target: Member): Promise<{ messages: number; mentions: number }> {
  const [c] = await sql<{ messages: number; unindexed: number; cursor_behind: boolean; points_not_one: number }[]>`
    SELECT (SELECT count(*)::int FROM chat_messages) AS messages,
      (SELECT count(*)::int FROM chat_messages m WHERE NOT EXISTS (SELECT 1 FROM chat_search x WHERE x.seq = m.seq)) AS unindexed,
      (SELECT indexed_seq < (SELECT max(seq) FROM chat_messages) FROM chat_index) AS cursor_behind,
      (SELECT count(*)::int FROM (
        SELECT m.id, count(p.id) AS n FROM chat_messages m
        LEFT JOIN point_events p ON p.kind = 'chat_message' AND p.ref = m.id::text GROUP BY m.id) x WHERE x.n <> 1) AS points_not_one`;
  expect(c).toMatchObject({ unindexed: 0, cursor_behind: false, points_not_one: 0 });
  const owner = idOf(target.number);
  const items = await sql<{ id: number; subject_id: string; seq: number }[]>`
    SELECT i.id::int AS id, i.subject_id, m.seq::int AS seq FROM inbox_items i JOIN chat_messages m ON m.id::text = i.subject_id
    WHERE i.identity_id = ${owner} AND i.kind = 'mention' ORDER BY i.id`;
  const naming = await sql<{ id: string }[]>`
    SELECT id::text FROM chat_messages WHERE ${owner}::bigint = ANY(mentions) ORDER BY seq`;
  // One item per message that names the member, no more, in the messages' order, ids dense.
  expect(items.map((i) => i.subject_id)).toEqual(naming.map((m) => m.id));
  expect(items.map((i) => i.id)).toEqual(items.map((_, k) => (items[0]?.id ?? 1) + k));
  // The score is the sum of the member's events: each counted once by the trigger.
  const [s] = await sql<{ score: number; sum: number }[]>`
    SELECT (SELECT score FROM identity_scores WHERE identity_id = ${owner}) AS score,
      (SELECT sum(points)::int FROM point_events WHERE identity_id = ${owner}) AS sum`;
  expect(s?.score).toBe(s?.sum);
  return { messages: c?.messages ?? 0, mentions: items.length };
}

it.runIf(faultsEnabled)(
  'SIGKILL with an indexer step written and not committed: a new node indexes every post exactly once',
  async () => {
    const a = await start('stall');
    const poster = await member(a.url, 'Poster');
    const target = await member(a.url, 'Target');
    // Posts by a member and by guests, each naming the target and carrying a word of its own.
    const posted = await Promise.all(
      Array.from({ length: 40 }, (_, i) => post(a.url, i % 4 === 3 ? null : poster, `stalled word${i}x for @${target.number}`)),
    );
    expect(posted.every((id) => id !== null)).toBe(true);
    // The indexer's step has written some of them inside its transaction and waits before its commit.
    await waitFor(() => a.log().includes('chat indexer: stalled before commit'), 30_000, 'the stalled step');
    const [before] = await sql<{ points: number; items: number; cursor: number }[]>`
      SELECT (SELECT count(*)::int FROM point_events WHERE kind = 'chat_message') AS points,
        (SELECT count(*)::int FROM inbox_items WHERE kind = 'mention') AS items,
        (SELECT indexed_seq::int FROM chat_index) AS cursor`;
    expect(before).toEqual({ points: 0, items: 0, cursor: 0 });
    a.kill('SIGKILL');
    await a.exited;

    const b = await start('on');
    await chatIndexed(b, 30_000);
    expect(await exactlyOnce(target)).toEqual({ messages: 40, mentions: 40 });
    const [p] = await sql<{ score: number }[]>`SELECT score FROM identity_scores WHERE identity_id = ${idOf(poster.number)}`;
    expect(p?.score).toBe(30); // one point for each of its 30 messages, the guests' 10 elsewhere
    for (const i of [0, 17, 39]) {
      const r = await call(b.url, 'GET', `/api/v1/search?q=word${i}x&type=chat`);
      expect(r.json.data.hits.map((h: { id: string }) => h.id)).toEqual([posted[i]]);
    }
    b.kill('SIGTERM');
    await b.exited;
  },
  180_000,
);

it.runIf(faultsEnabled)(
  'SIGKILL at a random instant while posts flow: every acknowledged post is indexed exactly once by the next node',
  async () => {
    const a = await start('on');
    const posters = [await member(a.url, 'Flow A'), await member(a.url, 'Flow B')];
    const target = await member(a.url, 'Flow target');
    const acked: string[] = [];
    let running = true;
    const loop = async (who: Member | null, k: number) => {
      for (let i = 0; running; i++) {
        try {
          const id = await post(a.url, who, `flow ${k}-${i} for @${target.number}`);
          if (id) acked.push(id);
        } catch {
          // the node is gone: nothing was acknowledged
          await new Promise((ok) => setTimeout(ok, 20));
        }
      }
    };
    const loops = [loop(posters[0] ?? null, 0), loop(posters[1] ?? null, 1), loop(null, 2), loop(posters[0] ?? null, 3)];
    await waitFor(() => acked.length >= 50, 60_000, 'posts flowing');
    await new Promise((ok) => setTimeout(ok, Math.random() * 1000));
    a.kill('SIGKILL');
    await a.exited;
    running = false;
    await Promise.all(loops);
    // What the killed node left unindexed (often some: its posts' last steps had not run or committed).
    const [left] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM chat_messages WHERE seq > (SELECT indexed_seq FROM chat_index)`;

    const b = await start('on');
    await chatIndexed(b, 30_000);
    const stored = new Set((await sql<{ id: string }[]>`SELECT id::text FROM chat_messages`).map((r) => r.id));
    expect(acked.filter((id) => !stored.has(id))).toEqual([]);
    const { messages, mentions } = await exactlyOnce(target);
    expect(mentions).toBe(
      (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM chat_messages WHERE mentions IS NOT NULL AND body LIKE 'flow %'`)[0]?.n,
    );
    console.log(JSON.stringify({ figures: 'chat-indexer-killed', acknowledged: acked.length, leftUnindexed: left?.n, messages, mentions }));
  },
  180_000,
);
