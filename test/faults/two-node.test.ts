// Two server processes sharing one PostgreSQL schema and one Redis prefix (STYLE.md 10):
// a message posted to node A reaches a subscriber of node B once, and concurrent posts on both
// nodes reach subscribers of both in one order, with no gap and no duplicate.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/server.js';
import { type Frame, StreamClient } from '../helpers/stream.js';
import { waitFor } from '../helpers/wait.js';
import { type Node, startNode } from './servers.js';

const DATABASE_URL = process.env.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL;
const enabled = Boolean(DATABASE_URL && REDIS_URL);
if (!enabled) console.log('two-node test: DATABASE_URL and REDIS_URL are both needed; it does not run here (CI sets them)');

const schema = `t2n_${randomBytes(5).toString('hex')}`;
const prefix = `t2n${randomBytes(5).toString('hex')}:`;
const dataDir = mkdtempSync(join(tmpdir(), 'commons-two-node-'));

/** A node process on the shared schema and Redis prefix (test/faults/servers.ts starts it). */
const start = (name: string): Promise<Node> =>
  startNode(
    {
      DATABASE_URL: DATABASE_URL as string,
      DATABASE_SCHEMA: schema,
      REDIS_URL: REDIS_URL as string,
      REDIS_PREFIX: prefix,
      DATA_DIR: join(dataDir, name),
    },
    `node ${name}`,
  );

describe.runIf(enabled)('two nodes, one PostgreSQL, one Redis', () => {
  let a: Node;
  let b: Node;
  beforeAll(async () => {
    const sql = postgres(DATABASE_URL as string, { max: 1, onnotice: () => {} });
    await sql.unsafe(`CREATE SCHEMA "${schema}"`);
    await sql.end();
    a = await start('a');
    b = await start('b');
  }, 120_000);
  afterAll(async () => {
    for (const n of [a, b]) n?.kill('SIGTERM');
    await Promise.all([a?.exited, b?.exited]);
    const sql = postgres(DATABASE_URL as string, { max: 1, onnotice: () => {} });
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await sql.end();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('carries a message posted to node A to a subscriber of node B exactly once, and back over REST', async () => {
    const onB = await StreamClient.open(b.url);
    await onB.request('subscribe', { topic: 'chat' });
    const posted = await call(a.url, 'POST', '/api/v1/chat', { body: { body: 'from node A', name: 'Traveller' } });
    expect(posted.status).toBe(200);
    const e = await onB.next((f) => f.op === 'event' && f.data?.id === posted.json.data.id);
    expect(e.data).toMatchObject({ body: 'from node A', guest_label: 'Traveller' });
    // A duplicate would reach B before a later post from the same node A.
    const after = await call(a.url, 'POST', '/api/v1/chat', { body: { body: 'sentinel from node A' } });
    await onB.next((f) => f.op === 'event' && f.data?.id === after.json.data.id);
    expect(onB.events('chat').filter((f) => f.data?.id === posted.json.data.id)).toEqual([]);
    // A socket post on B is in A's memory for REST readers.
    const ack = await onB.request('chat', { body: 'from node B' });
    await waitFor(
      async () => {
        const list = await call(a.url, 'GET', '/api/v1/chat?limit=10');
        return list.json.data.messages.some((m: { id: string }) => m.id === ack.data.id);
      },
      10_000,
      "node B's socket post in node A's memory",
    );
    onB.close();
  });

  it('gives subscribers on both nodes the same order, with no gap and no duplicate, under concurrent posts', async () => {
    const subs = await Promise.all([StreamClient.open(a.url), StreamClient.open(b.url, { msgpack: true })]);
    for (const c of subs) await c.request('subscribe', { topic: 'chat' });
    const posts = await Promise.all(
      Array.from({ length: 30 }, (_, i) => call(i % 2 ? a.url : b.url, 'POST', '/api/v1/chat', { body: { body: `burst-${i}` } })),
    );
    const seqs = posts.map((p) => p.json.data.seq as number).sort((x, y) => x - y);
    const top = seqs.at(-1) as number;
    for (const c of subs) await c.next((f: Frame) => f.op === 'event' && Number(f.id) === top, 10_000);
    // A late duplicate from either node would arrive before that node's next post.
    const marks = await Promise.all([a.url, b.url].map((u) => call(u, 'POST', '/api/v1/chat', { body: { body: 'sentinel' } })));
    for (const c of subs) for (const m of marks) await c.next((f: Frame) => f.op === 'event' && f.data?.id === m.json.data.id, 10_000);
    for (const c of subs) {
      const ids = c.events('chat').map((f) => Number(f.id));
      const mine = [...ids, top].filter((x) => x >= (seqs[0] as number) && x <= top);
      expect(mine).toEqual(seqs);
    }
    for (const c of subs) c.close();
  });

  it('stops on SIGTERM cleanly, closing sockets with 1001', async () => {
    const c = await StreamClient.open(b.url);
    b.kill('SIGTERM');
    expect((await c.closed).code).toBe(1001);
    expect(await b.exited).toBe(0);
    await waitFor(() => b.log().includes('"msg":"stopped"') || b.log().includes('unclean stop'), 5000, 'the last log line');
    // main.ts logs "stopped" right before exiting 0 (and "unclean stop" before exiting 1).
    expect(b.log()).toContain('"msg":"stopped"');
    expect(b.log()).not.toContain('unclean stop');
  }, 30_000);
});
