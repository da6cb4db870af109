// Idempotency keys across two nodes on one PostgreSQL (DECISIONS.md "Idempotent writes"): while a
// keyed task claim is held inside its transaction on node A (a test transaction holds the task's
// row lock: a barrier, released by the test), the same key answers 409 IDEMPOTENCY_IN_FLIGHT with
// Retry-After: 1 on node B and on node A; once A commits, B gives A's stored answer again
// (Idempotent-Replayed) and the claim happened once. Real PostgreSQL only (two nodes at once).
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { twoNodes } from '../helpers/nodes.js';
import { type Answer, type TestServer, usingRealPostgres } from '../helpers/server.js';
import { type Member, member, post } from '../helpers/tasks.js';
import { waitFor } from '../helpers/wait.js';

const enabled = usingRealPostgres();
let a: TestServer;
let b: TestServer;
let schema: string;
let close: () => Promise<void>;

beforeAll(async () => {
  if (!enabled) return;
  // Deadlines long enough for the barrier to be held without the lock timeout ending it.
  const nodes = await twoNodes({ DB_LOCK_TIMEOUT_MS: '30000', DB_STATEMENT_TIMEOUT_MS: '30000', REQUEST_DEADLINE_MS: '30000' });
  ({ a, b, close } = nodes);
  schema = nodes.shared.schema;
});
afterAll(async () => {
  await close?.();
});

const claim = (s: TestServer, who: Member, id: string): Promise<Answer> =>
  s.call('POST', `/api/v1/habitat/tasks/${id}/claim`, { token: who.token, headers: { 'idempotency-key': `claim-${id}` } });

it.runIf(enabled)('a key in flight on one node: 409 on both nodes; then the stored answer on the other node, one claim', async () => {
  const poster = await member(a, 'Poster');
  const solver = await member(a, 'Solver');
  const id = await post(a, poster, 5);
  // One connection holds the barrier, the other looks on.
  const db = postgres(process.env.DATABASE_URL as string, { max: 2, onnotice: () => {}, connection: { search_path: schema } });
  let release = () => {};
  const barrier = new Promise<void>((ok) => {
    release = ok;
  });
  let holderPid = 0;
  let locked = () => {};
  const isLocked = new Promise<void>((ok) => {
    locked = ok;
  });
  const holding = db.begin(async (tx) => {
    const [me] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
    holderPid = me?.pid ?? 0;
    await tx`SELECT id FROM tasks WHERE id = ${id} FOR UPDATE`;
    locked();
    await barrier;
  });
  await isLocked;
  const first = claim(a, solver, id);
  // Node A's claim is inside its keyed transaction, waiting for the row: a condition, not a pause.
  await waitFor(
    async () => (await db`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${holderPid} = ANY(pg_blocking_pids(pid))`)[0]?.n === 1,
    15_000,
    'the first claim waiting on the held row',
  );
  for (const node of [b, a]) {
    const busy = await claim(node, solver, id);
    expect(busy.status, busy.text).toBe(409);
    expect(busy.json.error.code).toBe('IDEMPOTENCY_IN_FLIGHT');
    expect(busy.headers.get('retry-after')).toBe('1');
  }
  release();
  await holding;
  const done = await first;
  expect(done.status, done.text).toBe(200);
  const again = await claim(b, solver, id);
  expect(again.status).toBe(200);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(again.json.data).toEqual(done.json.data);
  const [events] = await db<{ n: number }[]>`SELECT count(*)::int AS n FROM task_events WHERE task_id = ${id}`;
  expect(events?.n).toBe(2);
  await db.end();
});
