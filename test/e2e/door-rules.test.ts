// Every door, the same rules (DECISIONS.md "Every door, the same rules", "Idempotent writes"): a
// keyed stream op runs in the keyed write's transaction (one frame never wedges the embedded
// store), and every write from every door, keyed or not, spends the caller's one write budget,
// the session's op budget on top. One server for the file, limits on (write=5/60 so a budget is
// spent in a few writes), each case from its own address. Both backends.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { busEnv, StreamClient } from '../helpers/stream.js';

const WRITES = 5;
let s: TestServer;
const clients: StreamClient[] = [];
let addresses = 0;
/** A fresh address (TRUST_PROXY=1), so no case spends another's budget. */
const address = () => ({ 'x-forwarded-for': `203.0.113.${++addresses}` });

beforeAll(async () => {
  s = await startTestServer({ ...busEnv(), RATE_LIMITS: 'on', TRUST_PROXY: '1', RATE_LIMIT_POLICY: `write=${WRITES}/60` });
});
afterAll(async () => {
  for (const c of clients) c.close();
  await s.close();
});

async function member(name: string) {
  const headers = address();
  const a = await register(s, name, {}, headers);
  const c = await StreamClient.open(s.url, { token: a.api_token, headers });
  clients.push(c);
  return { ...a, headers, c };
}

const keyRows = async () => (await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM idempotency_keys`)[0]?.n ?? 0;

describe('keyed stream ops', () => {
  it('a keyed heartbeat is acknowledged, replayed for its key, and the node keeps answering', async () => {
    const m = await member('Keyed Beat');
    const first = await m.c.request('heartbeat', { idempotency_key: 'k-1' }, 3000);
    expect(first).toMatchObject({ op: 'ack', data: { state: 'resident', became_resident: true } });
    const again = await m.c.request('heartbeat', { idempotency_key: 'k-1' }, 3000);
    expect(again).toMatchObject({ op: 'ack', data: first.data });
    const other = await m.c.request('heartbeat', { idempotency_key: 'k-1', status_note: 'other' }, 3000);
    expect(other).toMatchObject({ op: 'error', error: { code: 'IDEMPOTENCY_MISMATCH' } });
    expect((await s.call('GET', '/readyz')).status).toBe(200);
    // The same over MessagePack, and a keyed chat after it: the store is not held.
    const mp = await StreamClient.open(s.url, { token: m.api_token, headers: m.headers, msgpack: true });
    clients.push(mp);
    expect(await mp.request('heartbeat', { idempotency_key: 'k-2' }, 3000)).toMatchObject({ op: 'ack' });
    expect(await m.c.request('chat', { body: 'still answering', idempotency_key: 'k-3' }, 3000)).toMatchObject({ op: 'ack' });
  });
});

describe('one write budget', () => {
  it('keyed and unkeyed stream heartbeats spend the write budget REST spends: refused past it, nothing kept', async () => {
    const m = await member('Budgeted');
    const rest = await s.call('POST', '/api/v1/habitat/heartbeat', { token: m.api_token, headers: m.headers, body: {} });
    expect(rest.status, rest.text).toBe(200);
    const before = await keyRows();
    const answers: string[] = [];
    for (let i = 1; i < WRITES + 2; i++) {
      const fields = i % 2 === 0 ? { idempotency_key: randomUUID() } : {};
      const a = await m.c.request('heartbeat', fields);
      answers.push(a.op === 'ack' ? 'ack' : a.error.code);
    }
    expect(answers).toEqual([...Array(WRITES - 1).fill('ack'), 'RATE_LIMITED', 'RATE_LIMITED']);
    // Two of the four acknowledged heartbeats were keyed (i = 2, 4); the refused keyed one kept nothing.
    expect((await keyRows()) - before).toBe(2);
    const after = await s.call('POST', '/api/v1/habitat/heartbeat', { token: m.api_token, headers: m.headers, body: {} });
    expect(after.status).toBe(429);
    expect(after.json.error.code).toBe('RATE_LIMITED');
  });
});
