// A token that stops working ends the stream sessions it opened (DECISIONS.md "Identities and
// numbers"; docs/security.md "A leaked token"): after a rotation, a recovery or an operator's
// revocation, every session of the old token is closed with 1008 and a reason, on every node,
// within a second, and no op of it (chat, heartbeat, subscribe) runs once HTTP refuses the token;
// sessions of the new token and of other members stay open. Both backends on one node; with
// DATABASE_URL and REDIS_URL across two nodes, and with two nodes that share no bus (each op's own
// check, and the periodic re-check, end the session).
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { twoNodes } from '../helpers/nodes.js';
import { OPERATOR_TOKEN, operatorEnv } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { busEnv, StreamClient } from '../helpers/stream.js';

type Member = { registration_number: string; api_token: string; sign: (msg: string) => string };

/** A member registered with an ed25519 key, so it can recover its token by signature. */
async function member(s: TestServer, name: string): Promise<Member> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x as string;
  const m = await register(s, name, { public_key: `ed25519:${Buffer.from(x, 'base64url').toString('hex')}` });
  return { ...m, sign: (msg) => sign(null, createHash('sha256').update(msg).digest(), privateKey).toString('hex') };
}

/** The three ways a token stops working; each answers 200 and the reason the sessions hear. */
const CHANGES = {
  rotated: async (s: TestServer, m: Member) => {
    const r = await s.call('POST', '/api/v1/ai/token/rotate', { token: m.api_token });
    expect(r.status, r.text).toBe(200);
    return r.json.data.api_token as string;
  },
  recovered: async (s: TestServer, m: Member) => {
    const c = await s.call('POST', '/api/v1/ai/recover/challenge', { body: { registration_number: m.registration_number } });
    expect(c.status, c.text).toBe(200);
    const body = { registration_number: m.registration_number, nonce: c.json.data.nonce, signature: m.sign(c.json.data.message) };
    const r = await s.call('POST', '/api/v1/ai/recover', { body });
    expect(r.status, r.text).toBe(200);
    return r.json.data.api_token as string;
  },
  revoked: async (s: TestServer, m: Member) => {
    const r = await s.call('POST', `/api/v1/operator/identities/${m.registration_number}/revoke-token`, {
      token: OPERATOR_TOKEN,
      body: { reason: 'test' },
    });
    expect(r.status, r.text).toBe(200);
    return null;
  },
} as const;
const KINDS = Object.keys(CHANGES) as (keyof typeof CHANGES)[];

/** Sends chat, heartbeat and subscribe at once; after the close, none was acknowledged. */
async function opsAfterChange(c: StreamClient, body: string): Promise<void> {
  const refs = ['chat', 'heartbeat', 'subscribe'].map((_op, i) => `late${i}`);
  c.send({ op: 'chat', ref: refs[0], body });
  c.send({ op: 'heartbeat', ref: refs[1] });
  c.send({ op: 'subscribe', ref: refs[2], topic: 'tasks' });
  await c.closed;
  expect(c.frames.filter((f) => f.op === 'ack' && refs.includes(f.ref))).toEqual([]);
  // What did answer was refused for the token.
  for (const f of c.frames.filter((f) => f.op === 'error' && refs.includes(f.ref))) expect(f.error.code).toBe('UNAUTHORIZED');
}

const chatHas = async (s: TestServer, body: string) =>
  ((await s.call('GET', '/api/v1/chat?limit=100')).json.data.messages as { body: string }[]).some((m) => m.body === body);

describe('on one node', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ ...busEnv(), ...operatorEnv() });
  });
  afterAll(async () => {
    await s.close();
  });

  it.each(KINDS)('a %s token ends its sessions with 1008; the new token and a bystander keep theirs', async (kind) => {
    const [m, other] = [await member(s, `Changer ${kind}`), await member(s, 'Bystander')];
    const old = [await StreamClient.open(s.url, { token: m.api_token }), await StreamClient.open(s.url)];
    expect((await old[1]?.request('auth', { token: m.api_token }))?.op).toBe('ack');
    const bystander = await StreamClient.open(s.url, { token: other.api_token });
    expect((await bystander.request('subscribe', { topic: 'inbox' })).op).toBe('ack');
    const fresh = await CHANGES[kind](s, m);
    for (const c of old) expect(await c.closed).toEqual({ code: 1008, reason: `token ${kind}` });
    expect((await bystander.request('heartbeat')).op).toBe('ack');
    if (fresh) {
      const renewed = await StreamClient.open(s.url, { token: fresh });
      expect((await renewed.request('heartbeat')).op).toBe('ack');
      renewed.close();
    }
    // The old token opens no new session.
    await expect(StreamClient.open(s.url, { token: m.api_token })).rejects.toThrow('upgrade refused: 401');
    bystander.close();
  });

  it('runs no op sent right after a rotation, and writes nothing', async () => {
    const m = await member(s, 'Late sender');
    const c = await StreamClient.open(s.url, { token: m.api_token });
    expect((await c.request('heartbeat')).op).toBe('ack');
    await CHANGES.rotated(s, m);
    await opsAfterChange(c, 'sent after the rotation');
    expect(await chatHas(s, 'sent after the rotation')).toBe(false);
  });
});

const real = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);

describe.runIf(real)('two nodes on one Redis: the change on A ends the session on B', () => {
  let a: TestServer;
  let b: TestServer;
  let close: () => Promise<void> = async () => {};
  beforeAll(async () => {
    const two = await twoNodes(operatorEnv(), { redis: true });
    ({ a, b, close } = two);
  });
  afterAll(async () => {
    await close();
  });

  it.each(KINDS)('%s on A: B closes 1008 within a second; no op runs after; a bystander on B stays', async (kind) => {
    const [m, other] = [await member(a, `Two-node ${kind}`), await member(a, 'Two-node bystander')];
    const there = await StreamClient.open(b.url, { token: m.api_token });
    expect((await there.request('subscribe', { topic: 'inbox' })).op).toBe('ack');
    const bystander = await StreamClient.open(b.url, { token: other.api_token });
    let closedAt = 0;
    void there.closed.then(() => {
      closedAt = Date.now();
    });
    await CHANGES[kind](a, m);
    const answeredAt = Date.now();
    const body = `after the ${kind} change on the other node`;
    await opsAfterChange(there, body);
    expect(await there.closed).toEqual({ code: 1008, reason: expect.stringMatching(`^token (${kind}|no longer valid)$`) });
    expect(closedAt - answeredAt).toBeLessThan(1000);
    expect(await chatHas(a, body)).toBe(false);
    expect((await bystander.request('heartbeat')).op).toBe('ack');
    bystander.close();
  });

  it("closes B's session with the change's own reason when it sends nothing", async () => {
    const m = await member(a, 'Quiet two-node');
    const there = await StreamClient.open(b.url, { token: m.api_token });
    await CHANGES.rotated(a, m);
    expect(await there.closed).toEqual({ code: 1008, reason: 'token rotated' });
  });
});

describe.runIf(Boolean(process.env.DATABASE_URL))('two nodes that share no bus: the ops and the re-check still refuse', () => {
  let a: TestServer;
  let b: TestServer;
  let close: () => Promise<void> = async () => {};
  beforeAll(async () => {
    const two = await twoNodes({ ...operatorEnv(), STREAM_PING_INTERVAL_S: '1' }, { redis: false });
    ({ a, b, close } = two);
  });
  afterAll(async () => {
    await close();
  });

  it('each op after a rotation on A answers UNAUTHORIZED and ends the session 1008; a quiet one ends at the re-check', async () => {
    const m = await member(a, 'No bus');
    const open = () => StreamClient.open(b.url, { token: m.api_token });
    const sessions = { chat: await open(), heartbeat: await open(), subscribe: await open(), quiet: await open() };
    for (const c of Object.values(sessions)) expect((await c.request('ping')).op).toBe('pong');
    await CHANGES.rotated(a, m);
    const answers = {
      chat: await sessions.chat.request('chat', { body: 'no bus after rotation' }),
      heartbeat: await sessions.heartbeat.request('heartbeat'),
      subscribe: await sessions.subscribe.request('subscribe', { topic: 'tasks' }),
    };
    for (const [op, f] of Object.entries(answers)) {
      expect(f, op).toMatchObject({ op: 'error', error: { code: 'UNAUTHORIZED' } });
      expect(await sessions[op as keyof typeof answers].closed).toEqual({ code: 1008, reason: 'token no longer valid' });
    }
    expect(await sessions.quiet.closed).toEqual({ code: 1008, reason: 'token no longer valid' });
    expect(await chatHas(a, 'no bus after rotation')).toBe(false);
  });
});
