// Redis lost and back under two nodes (DECISIONS.md "Reliability promises"): a private
// redis-server killed with SIGKILL while both nodes serve. REST goes on, each node's stream keeps
// delivering what that node sees, /readyz stays 200 and names Redis as degraded (and /metrics
// says so); when Redis returns, cross-node delivery resumes and the message node B missed is
// filled from the database, once, as soon as the bus is back (before any later post). Rate limits meanwhile count in each node's memory.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream.js';
import { waitFor } from '../helpers/wait.js';
import { faultsEnabled, type Node, PrivateRedis, startNode } from './servers.js';

const schema = `tfr_${randomBytes(5).toString('hex')}`;
const dataDir = mkdtempSync(join(tmpdir(), 'commons-redis-lost-'));
let redis: PrivateRedis;
let a: Node;
let b: Node;

beforeAll(async () => {
  if (!faultsEnabled) return;
  const sql = postgres(process.env.DATABASE_URL as string, { max: 1, onnotice: () => {} });
  await sql.unsafe(`CREATE SCHEMA "${schema}"`);
  await sql.end();
  redis = await PrivateRedis.create();
  const env = (n: string) => ({
    DATABASE_URL: process.env.DATABASE_URL as string,
    DATABASE_SCHEMA: schema,
    REDIS_URL: redis.url,
    REDIS_PREFIX: `${schema}:`,
    DATA_DIR: join(dataDir, n),
    // Limits on: while Redis is gone they count in each node's memory (neither open nor closed).
    RATE_LIMITS: 'on',
  });
  a = await startNode(env('a'), 'a');
  b = await startNode(env('b'), 'b');
}, 120_000);

afterAll(async () => {
  for (const n of [a, b]) n?.kill();
  await Promise.all([a?.exited, b?.exited]);
  await redis?.kill();
  if (faultsEnabled) {
    const sql = postgres(process.env.DATABASE_URL as string, { max: 1, onnotice: () => {} });
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await sql.end();
  }
  rmSync(dataDir, { recursive: true, force: true });
});

const ready = async (n: Node) => (await call(n.url, 'GET', '/readyz')).json as { status: string; degraded: string[] };
const post = async (n: Node, body: string) => {
  const r = await call(n.url, 'POST', '/api/v1/chat', { body: { body } });
  expect(r.status, r.text).toBe(200);
  expect(r.headers.get('ratelimit')).toMatch(/"chat_ip";r=\d+/);
  return r.json.data as { id: string; seq: number };
};

it.runIf(faultsEnabled)(
  'Redis killed and restarted: REST and local delivery go on, /readyz 200 naming redis, gaps filled once',
  async () => {
    const onA = await StreamClient.open(a.url);
    const onB = await StreamClient.open(b.url);
    await onA.request('subscribe', { topic: 'chat' });
    await onB.request('subscribe', { topic: 'chat' });
    const before = await post(a, 'before the outage');
    await onB.next((f) => f.op === 'event' && f.data?.id === before.id, 10_000);

    await redis.kill();
    const killedAt = Date.now();
    await expect.poll(async () => (await ready(a)).degraded, { timeout: 5000, interval: 100 }).toEqual(['redis']);
    await expect.poll(async () => (await ready(b)).degraded, { timeout: 5000, interval: 100 }).toEqual(['redis']);
    const degradedAfterMs = Date.now() - killedAt;
    for (const n of [a, b]) {
      const r = await call(n.url, 'GET', '/readyz');
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ status: 'ready', database: true, degraded: ['redis'] });
      expect((await call(n.url, 'GET', '/metrics')).text).toMatch(/commons_dependency_up\{part="redis"\} 0/);
    }
    // REST and each node's own stream go on.
    const during = await post(a, 'during the outage');
    await onA.next((f) => f.op === 'event' && f.data?.id === during.id, 10_000);
    const listed = await call(b.url, 'GET', '/api/v1/chat?limit=10');
    expect(listed.status).toBe(200);

    await redis.start();
    const backAt = Date.now();
    await expect.poll(async () => (await ready(a)).degraded, { timeout: 15_000, interval: 100 }).toEqual([]);
    await expect.poll(async () => (await ready(b)).degraded, { timeout: 15_000, interval: 100 }).toEqual([]);
    const recoveredAfterMs = Date.now() - backAt;
    // The message B missed reaches its stream once the bus is back, with no later post to show
    // the gap (the bus's resumption makes B settle up to the database's head).
    await waitFor(() => onB.events('chat').some((f) => f.data?.id === during.id), 15_000, 'the missed message on B, unprompted');
    const after = await post(a, 'after the outage');
    // B gets the message it missed (from the database) and the new one, in order, each once.
    await onB.next((f) => f.op === 'event' && f.data?.id === after.id, 15_000);
    // A late duplicate would reach B before a later post from the same node A: once that one is
    // in, nothing earlier is still on its way (a condition, not a pause).
    const sentinel = await post(a, 'sentinel');
    await waitFor(() => onB.events('chat').some((f) => f.data?.id === sentinel.id), 15_000, 'the sentinel on B');
    const ids = onB.events('chat').map((f) => f.data?.id as string);
    expect(ids).toEqual([...new Set(ids)]);
    expect(ids).toContain(during.id);
    const seqs = onB.events('chat').map((f) => Number(f.id));
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(a.child.exitCode).toBeNull();
    expect(b.child.exitCode).toBeNull();
    console.log(JSON.stringify({ figures: 'redis-lost', degradedAfterMs, recoveredAfterMs, missedFilledOnB: true }));
    onA.close();
    onB.close();
  },
  90_000,
);
