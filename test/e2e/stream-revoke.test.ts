// An operator's token revocation reaches open stream sessions (DECISIONS.md "Operator",
// "Reliability promises"): every session of that identity, on every node, is closed with 1008
// "token revoked" and hears no member topic afterwards, while every other session stays open and
// keeps receiving them. With DATABASE_URL and REDIS_URL the same holds across two nodes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { twoNodes } from '../helpers/nodes.js';
import { OPERATOR_TOKEN as OP } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { busEnv, StreamClient } from '../helpers/stream.js';

const revoke = (s: TestServer, number: string) =>
  s.call('POST', `/api/v1/operator/identities/${number}/revoke-token`, { token: OP, body: { reason: 'test' } });

const postTask = async (s: TestServer, token: string, title: string): Promise<string> => {
  const r = await s.call('POST', '/api/v1/habitat/tasks', { token, body: { title, body: 'b', reward_points: 3 } });
  expect(r.status, r.text).toBe(200);
  return r.json.data.id as string;
};

async function subscribed(s: TestServer, token: string): Promise<StreamClient> {
  const c = await StreamClient.open(s.url, { token });
  for (const topic of ['tasks', 'workroom']) expect(await c.request('subscribe', { topic })).toMatchObject({ op: 'ack' });
  return c;
}

describe('revoking a token on one node', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ ...busEnv(), OPERATOR_TOKEN: OP });
  });
  afterAll(async () => {
    await s.close();
  });

  it('closes every session of that identity with 1008; other sessions stay and keep hearing member topics', async () => {
    const [a, b] = [await register(s, 'Revoked streamer'), await register(s, 'Still here')];
    const revoked = [await subscribed(s, a.api_token), await subscribed(s, a.api_token)];
    const keep = await subscribed(s, b.api_token);
    const r = await revoke(s, a.registration_number);
    expect(r.status, r.text).toBe(200);
    expect(r.json.data).toMatchObject({ registration_number: a.registration_number, revoked: true });
    for (const c of revoked) expect(await c.closed).toEqual({ code: 1008, reason: 'token revoked' });
    // The bystander hears a task posted after the revocation; the revoked sessions heard nothing.
    const t = await postTask(s, b.api_token, 'After the revocation');
    expect((await keep.next((f) => f.op === 'event' && f.topic === 'tasks')).data).toMatchObject({ task: { id: t } });
    for (const c of revoked) expect(c.frames.filter((f) => f.op === 'event')).toEqual([]);
    expect(await keep.request('ping')).toMatchObject({ op: 'pong' });
    // The revoked token cannot open a new session either.
    await expect(StreamClient.open(s.url, { token: a.api_token })).rejects.toThrow('upgrade refused: 401');
    keep.close();
  });

  it('leaves a session that re-authenticated as another member open', async () => {
    const [a, b] = [await register(s, 'Switcher'), await register(s, 'Switch target')];
    const c = await subscribed(s, a.api_token);
    expect(await c.request('auth', { token: b.api_token })).toMatchObject({
      op: 'ack',
      data: { registration_number: b.registration_number },
    });
    const watcher = await subscribed(s, a.api_token);
    expect((await revoke(s, a.registration_number)).status).toBe(200);
    expect(await watcher.closed).toEqual({ code: 1008, reason: 'token revoked' });
    expect(await c.request('ping')).toMatchObject({ op: 'pong' });
    c.close();
  });
});

const real = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);

describe.runIf(real)('revoking a token with two nodes (real PostgreSQL and Redis)', () => {
  const nodes: TestServer[] = [];
  const node = (i: number) => nodes[i] as TestServer;
  let close: () => Promise<void> = async () => {};
  beforeAll(async () => {
    const two = await twoNodes({ OPERATOR_TOKEN: OP }, { redis: true });
    nodes.push(two.a, two.b);
    close = two.close;
  });
  afterAll(async () => {
    await close();
  });

  it("closes the identity's sessions on the other node too, and only those", async () => {
    const [a, b] = [await register(node(0), 'Two-node revoked'), await register(node(0), 'Two-node keeper')];
    const here = await subscribed(node(0), a.api_token);
    const there = await subscribed(node(1), a.api_token);
    const keep = await subscribed(node(1), b.api_token);
    expect((await revoke(node(0), a.registration_number)).status).toBe(200);
    expect(await here.closed).toEqual({ code: 1008, reason: 'token revoked' });
    expect(await there.closed).toEqual({ code: 1008, reason: 'token revoked' });
    const t = await postTask(node(0), b.api_token, 'Heard across nodes');
    expect((await keep.next((f) => f.op === 'event' && f.topic === 'tasks')).data).toMatchObject({ task: { id: t } });
    expect(there.frames.filter((f) => f.op === 'event')).toEqual([]);
    keep.close();
  });
});
