// The stream's `chat` op under the same rate limits as POST /api/v1/chat (DECISIONS.md
// "Rate limits": guest chat 6/min per guest and 30/min per IP, member writes per token), counted
// by the same limiter (in Redis when REDIS_URL is set), refused with an error frame RATE_LIMITED
// and retry_after_s, with nothing written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownedGuestToken } from '../helpers/content.js';
import { countRows } from '../helpers/db.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { busEnv, StreamClient } from '../helpers/stream.js';

let s: TestServer;
let ipLimited: TestServer;
beforeAll(async () => {
  // Guest and IP limits at their defaults but a roomy IP limit, so the per-guest rule is what bites;
  // member writes shrunk to 3 a minute to reach them quickly.
  s = await startTestServer({ ...busEnv(), RATE_LIMITS: 'on', RATE_LIMIT_POLICY: 'chat_ip=1000/60,write=3/60' });
  ipLimited = await startTestServer({ ...busEnv(), RATE_LIMITS: 'on', RATE_LIMIT_POLICY: 'chat_ip=3/60' });
});
afterAll(async () => {
  await s.close();
  await ipLimited.close();
});

const chat = (c: StreamClient, body: string) => c.request('chat', { body });

function expectLimited(f: Record<string, unknown>): void {
  expect(f).toMatchObject({ op: 'error', error: { code: 'RATE_LIMITED' } });
  const retry = (f.error as { retry_after_s: number }).retry_after_s;
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(60);
}

describe('stream chat rate limits', () => {
  it('a guest gets 6 messages a minute; the 7th is refused with RATE_LIMITED and retry_after_s, and writes nothing', async () => {
    const c = await StreamClient.open(s.url);
    for (let i = 0; i < 6; i++) expect((await chat(c, `guest ${i}`)).op).toBe('ack');
    const before = await countRows(s, 'chat_messages');
    expectLimited(await chat(c, 'one too many'));
    // A client that keeps sending while limited stays limited.
    expectLimited(await chat(c, 'and another'));
    expect(await countRows(s, 'chat_messages')).toBe(before);
    const [row] = await s.app.ctx.sql`SELECT count(*)::int AS n FROM chat_messages WHERE body IN ('one too many', 'and another')`;
    expect(row?.n).toBe(0);
    // Other ops on the same session are not chat and go on working.
    expect((await c.request('ping')).op).toBe('pong');
    c.close();
  });

  it('counts one guest over HTTP and the stream together', async () => {
    // Its own token comes with its first post (sent without a token: counted by IP only).
    const token = await ownedGuestToken(s);
    for (let i = 0; i < 4; i++) {
      const r = await s.call('POST', '/api/v1/chat', { body: { body: `http ${i}` }, headers: { 'x-commons-guest-token': token } });
      expect(r.status).toBe(200);
    }
    const c = await StreamClient.open(s.url, { headers: { 'x-commons-guest-token': token } });
    expect(c.hello.guest.number).toMatch(/^GUEST-/);
    for (let i = 0; i < 2; i++) expect((await chat(c, `ws ${i}`)).op).toBe('ack');
    expectLimited(await chat(c, 'over the shared limit'));
    const http = await s.call('POST', '/api/v1/chat', { body: { body: 'http again' }, headers: { 'x-commons-guest-token': token } });
    expect(http.status).toBe(429);
    expect(http.json.error.code).toBe('RATE_LIMITED');
    c.close();
  });

  it('a guest authenticated later with auth is counted as that guest', async () => {
    const token = await ownedGuestToken(s);
    const c = await StreamClient.open(s.url);
    for (let i = 0; i < 6; i++) expect((await chat(c, `fresh ${i}`)).op).toBe('ack');
    expect((await c.request('auth', { token })).op).toBe('ack');
    // Now another guest with a fresh allowance.
    for (let i = 0; i < 6; i++) expect((await chat(c, `authed ${i}`)).op).toBe('ack');
    expectLimited(await chat(c, 'authed 7'));
    c.close();
  });

  it('a member chatting over the stream spends its per-token write allowance, shared with HTTP', async () => {
    const m = await register(s, 'Chatty');
    const c = await StreamClient.open(s.url, { token: m.api_token });
    for (let i = 0; i < 3; i++) expect((await chat(c, `member ${i}`)).op).toBe('ack');
    const before = await countRows(s, 'chat_messages');
    expectLimited(await chat(c, 'member 4'));
    expect(await countRows(s, 'chat_messages')).toBe(before);
    const http = await s.call('POST', '/api/v1/memory', { token: m.api_token, body: { key: 'k', value: 1 } });
    expect(http.status).toBe(429);
    // Another member's allowance is untouched, also when it authenticates on an open session.
    const other = await register(s, 'Quiet');
    const c2 = await StreamClient.open(s.url);
    expect((await c2.request('auth', { token: other.api_token })).op).toBe('ack');
    expect((await chat(c2, 'my first')).op).toBe('ack');
    c.close();
    c2.close();
  });

  it('counts guest chat per IP across sessions', async () => {
    const clients = await Promise.all([0, 1, 2, 3].map(() => StreamClient.open(ipLimited.url)));
    for (let i = 0; i < 3; i++) expect((await chat(clients[i] as StreamClient, `ip ${i}`)).op).toBe('ack');
    const before = await countRows(ipLimited, 'chat_messages');
    expectLimited(await chat(clients[3] as StreamClient, 'fourth from this address'));
    expect(await countRows(ipLimited, 'chat_messages')).toBe(before);
    for (const c of clients) c.close();
  });
});
