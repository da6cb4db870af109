// Every outage answer is a 503, and a keyed retry is done once (DECISIONS.md "Idempotent writes",
// "Reliability promises"): a node on a private PostgreSQL cluster takes keyed chat and task writes
// while the cluster is stopped (SIGSTOP: statement and lock deadlines, the request deadline), just
// after it resumes (connect timeouts, lock timeouts behind the backlog), and while it is killed
// (connection resets, refused connections). Every answer is 200 or 503 with Retry-After, never
// 500; retried with the same key until answered 200, each write is stored exactly once and the
// credits balance.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectServerErrors } from '../helpers/contract-gate.js';
import { type Answer, startTestServer, type TestServer } from '../helpers/server.js';
import { type Member, member } from '../helpers/tasks.js';
import { faultsEnabled, PrivatePostgres } from './servers.js';

let pg: PrivatePostgres;
let s: TestServer;
let alice: Member;

beforeAll(async () => {
  if (!faultsEnabled) return;
  pg = await PrivatePostgres.create();
  s = await startTestServer({ DATABASE_URL: pg.url });
  alice = await member(s, 'Alice');
}, 120_000);

afterAll(async () => {
  await s?.close().catch(() => {});
  pg?.stop();
});

interface Write {
  key: string;
  path: string;
  body: Record<string, unknown>;
  marker: string;
}

const writes: Write[] = [];
const statuses: Record<number, number> = {};

function newWrite(i: number, phase: string): Write {
  const marker = `${phase}-${i}-${randomUUID().slice(0, 8)}`;
  const w =
    i % 4 === 3
      ? { key: randomUUID(), path: '/api/v1/habitat/tasks', body: { title: marker, body: 'b', reward_points: 1 }, marker }
      : { key: randomUUID(), path: '/api/v1/chat', body: { body: marker }, marker };
  writes.push(w);
  return w;
}

async function send(w: Write): Promise<Answer> {
  const a = await s.call('POST', w.path, { token: alice.token, body: w.body, headers: { 'idempotency-key': w.key } });
  statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  expect([200, 503], `${w.path}: ${a.text}`).toContain(a.status);
  if (a.status === 503) {
    expect(a.headers.get('retry-after')).toBe('1');
    expect(a.json.error.code).toBe('UNAVAILABLE');
  }
  return a;
}

/** A burst of keyed writes at once, each answered 200 or 503 within the bound. */
async function burst(phase: string, n = 8): Promise<void> {
  const started = Date.now();
  await Promise.all(Array.from({ length: n }, (_, i) => send(newWrite(i, phase))));
  expect(Date.now() - started, `${phase}: every answer in time`).toBeLessThan(10_000);
}

it.runIf(faultsEnabled)(
  'PostgreSQL stopped, resumed and killed under keyed writes: 200 or 503 + Retry-After, never 500; retries store each once',
  async () => {
    expectServerErrors(); // 503s under the faults are the point here (DECISIONS.md "Idempotent writes")
    await burst('healthy', 4);
    pg.freeze();
    await burst('stopped');
    pg.thaw();
    await burst('resumed');
    await pg.kill();
    await burst('killed');
    await pg.start();
    // Every write retried with its key until it is answered 200 (a replay when the first was done).
    for (const w of writes) {
      await expect.poll(async () => (await send(w)).status, { timeout: 30_000, interval: 200 }).toBe(200);
    }
    const sql = s.app.ctx.sql;
    for (const w of writes) {
      const [row] =
        w.path === '/api/v1/chat'
          ? await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM chat_messages WHERE body = ${w.marker}`
          : await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM tasks WHERE title = ${w.marker}`;
      expect(row?.n, w.marker).toBe(1);
    }
    const [credits] = await sql<{ held: number; members: number }[]>`
      SELECT (SELECT coalesce(sum(balance), 0)::int FROM ledger_accounts WHERE kind IN ('identity', 'escrow')) AS held,
             (SELECT count(*)::int FROM identities) AS members`;
    expect(credits?.held).toBe(1000 * (credits?.members ?? 0));
    expect(statuses[500]).toBeUndefined();
    console.log(JSON.stringify({ figures: 'outage-answers', writes: writes.length, statuses }));
  },
  180_000,
);
