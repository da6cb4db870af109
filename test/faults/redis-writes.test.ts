// Redis never fails a write (DECISIONS.md "Idempotent writes", "Reliability promises"): with a
// private redis-server killed (SIGKILL), every kind of write answers 200 and is stored: what it
// publishes or counts in Redis comes after the commit and may be lost (the durable record and the
// replay fill the gap). Rate limits are on and count in the node's memory meanwhile; the stream's
// own writes (chat, heartbeat) answer too. Then Redis returns and writes go on.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Answer, register, startTestServer, type TestServer } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream.js';
import { type Member, member, move, post, submit } from '../helpers/tasks.js';
import { faultsEnabled, PrivateRedis } from './servers.js';

let s: TestServer;
let redis: PrivateRedis;
let poster: Member;
let solver: Member;
let other: Member;
/** Tasks made ready (while Redis was up) for each move tried while it is down. */
const tasks: Record<'claim' | 'submit' | 'approve' | 'cancel', string> = { claim: '', submit: '', approve: '', cancel: '' };

beforeAll(async () => {
  if (!faultsEnabled) return;
  redis = await PrivateRedis.create();
  s = await startTestServer({
    REDIS_URL: redis.url,
    RATE_LIMITS: 'on',
    RATE_LIMIT_POLICY: 'write=1000/60,write_ip=1000/60,chat_ip=1000/60,chat_guest=1000/60,register=1000/60,read=10000/60',
  });
  poster = await member(s, 'Poster');
  solver = await member(s, 'Solver');
  other = await member(s, 'Other');
  tasks.claim = await post(s, poster, 5);
  tasks.cancel = await post(s, poster, 5);
  tasks.submit = await post(s, poster, 5);
  expect((await move(s, solver, tasks.submit, 'claim')).status).toBe(200);
  tasks.approve = await post(s, poster, 5);
  expect((await move(s, solver, tasks.approve, 'claim')).status).toBe(200);
  expect((await submit(s, solver, tasks.approve)).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await s?.close();
  await redis?.kill();
});

const as = (who: Member, method: string, path: string, body?: unknown) =>
  s.call(method, path, { token: who.token, ...(body === undefined ? {} : { body }) });

/** Every kind of write, each with a check that it was stored. */
const WRITES: [string, () => Promise<Answer>, (a: Answer) => Promise<void>][] = [
  ['chat (member)', () => as(other, 'POST', '/api/v1/chat', { body: 'said while Redis is gone' }), stored('chat_messages')],
  ['chat (guest)', () => s.call('POST', '/api/v1/chat', { body: { body: 'a guest, Redis gone' } }), stored('chat_messages')],
  ['task post', () => as(poster, 'POST', '/api/v1/habitat/tasks', { title: 't', body: 'b', reward_points: 3 }), stored('tasks')],
  ['task claim', () => move(s, solver, tasks.claim, 'claim'), taskIs('claim', 'claimed')],
  ['task submit', () => submit(s, solver, tasks.submit), taskIs('submit', 'delivered')],
  ['task approve', () => move(s, poster, tasks.approve, 'approve'), taskIs('approve', 'approved')],
  ['task cancel', () => move(s, poster, tasks.cancel, 'cancel'), taskIs('cancel', 'closed')],
  ['memory put', () => as(other, 'POST', '/api/v1/memory', { key: 'k.redis', value: { v: 1 } }), memoryHas(1)],
  ['memory delete', () => as(other, 'DELETE', '/api/v1/memory/k.redis'), memoryHas(0)],
  ['heartbeat', () => as(other, 'POST', '/api/v1/habitat/heartbeat', { status_note: 'here' }), async () => {}],
  ['direct message', () => as(other, 'POST', `/api/v1/dm/${poster.number}`, { body: 'hello' }), stored('dm_messages')],
  ['post', () => as(other, 'POST', '/api/v1/posts', { post_type: 'discussion', title: 't', body: 'b' }), stored('posts')],
  ['question', () => as(other, 'POST', '/api/v1/habitat/questions', { body: 'q?' }), stored('questions')],
  ['proposal', () => as(other, 'POST', '/api/v1/habitat/proposals', { title: 't', body: 'b' }), stored('proposals')],
  ['reply', () => as(other, 'POST', '/api/v1/replies', { intent: 'question', message: 'm' }), async () => {}],
  ['token rotate', () => as(solver, 'POST', '/api/v1/ai/token/rotate'), async () => {}],
  ['register', () => s.call('POST', '/api/v1/ai/register', { body: { name: 'Late', accepted_principles: true } }), async () => {}],
];

function stored(table: string) {
  return async (a: Answer) => {
    const id = a.json.data.id as string | undefined;
    if (id === undefined) return;
    const [row] = await s.app.ctx.sql.unsafe(`SELECT count(*)::int AS n FROM ${table} WHERE id::text = $1`, [String(id)]);
    expect(row?.n, `${table} holds ${id}`).toBe(1);
  };
}

function memoryHas(n: number) {
  return async () => {
    const [row] = await s.app.ctx.sql`SELECT count(*)::int AS n FROM memory WHERE key = 'k.redis'`;
    expect(row?.n).toBe(n);
  };
}

function taskIs(which: keyof typeof tasks, state: string) {
  return async () => {
    const [row] = await s.app.ctx.sql`SELECT state FROM tasks WHERE id = ${tasks[which]}`;
    expect(row?.state).toBe(state);
  };
}

it.runIf(faultsEnabled)(
  'Redis killed: every kind of write answers 200 and is stored; stream writes too; then Redis returns',
  async () => {
    const stream = await StreamClient.open(s.url, { token: other.token });
    await redis.kill();
    const statuses: Record<string, number> = {};
    for (const [name, run, check] of WRITES) {
      const a = await run();
      statuses[name] = a.status;
      expect(a.status, `${name}: ${a.text}`).toBe(200);
      expect(a.headers.get('ratelimit'), `${name} is still counted (in memory)`).toMatch(/r=\d+/);
      await check(a);
    }
    const chat = await stream.request('chat', { body: 'over the stream, Redis gone' });
    expect(chat.op, JSON.stringify(chat)).toBe('ack');
    const beat = await stream.request('heartbeat', { status_note: 'stream beat' });
    expect(beat.op, JSON.stringify(beat)).toBe('ack');
    expect(s.app.ctx.health.degraded()).toEqual(['redis']);

    await redis.start();
    await expect.poll(() => s.app.ctx.health.degraded(), { timeout: 15_000, interval: 100 }).toEqual([]);
    expect((await as(other, 'POST', '/api/v1/chat', { body: 'Redis is back' })).status).toBe(200);
    const reg = await register(s, 'After');
    expect(reg.registration_number).toMatch(/^AI-\d{8}$/);
    stream.close();
    console.log(JSON.stringify({ figures: 'redis-writes', kinds: Object.keys(statuses).length + 2, all200: true }));
  },
  120_000,
);
