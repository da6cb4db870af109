// One credential per request (DESIGN.md "One credential, one runner";
// src/transport/admission/credential.ts): a member's token is read and digested once however many
// steps take it (limits, caller resolution, the token cache, the chat statement's check), and a
// bad token spends one budget whichever way in it takes: HTTP and the stream count together.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialDigests } from '../../src/transport/admission/credential.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream.js';

describe('digests', () => {
  let s: TestServer;
  beforeAll(async () => {
    // Limits on: the request passes every step that takes the credential.
    s = await startTestServer({ RATE_LIMITS: 'on' });
  });
  afterAll(async () => {
    await s.close();
  });

  it("a member's chat post digests its token once", async () => {
    const m = await register(s, 'Counted once');
    const before = credentialDigests();
    const r = await s.call('POST', '/api/v1/chat', { token: m.api_token, body: { body: 'one digest' } });
    expect(r.status, r.text).toBe(200);
    expect(credentialDigests() - before).toBe(1);
  });

  it("a member's read the lean path declines (token not cached yet) digests once over both paths", async () => {
    const m = await register(s, 'Read once');
    const before = credentialDigests();
    const r = await s.call('GET', '/api/v1/chat', { token: m.api_token });
    expect(r.status, r.text).toBe(200);
    expect(credentialDigests() - before).toBe(1);
    // Cached now: the lean path answers, with one digest too.
    const again = await s.call('GET', '/api/v1/chat', { token: m.api_token });
    expect(again.status).toBe(200);
    expect(credentialDigests() - before).toBe(2);
  });

  it("a member's stream upgrade and its auth digest once each", async () => {
    const m = await register(s, 'Streams once');
    const before = credentialDigests();
    const c = await StreamClient.open(s.url, { token: m.api_token });
    expect(c.hello.registration_number).toBe(m.registration_number);
    expect(credentialDigests() - before).toBe(1);
    expect((await c.request('auth', { token: m.api_token })).op).toBe('ack');
    expect(credentialDigests() - before).toBe(2);
    c.close();
  });
});

describe('one bad-token budget over HTTP and the stream', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ RATE_LIMITS: 'on', RATE_LIMIT_POLICY: 'bad_token_probe=1/3600', TRUST_PROXY: '1' });
  });
  afterAll(async () => {
    await s.close();
  });

  it('bad tokens over HTTP and over the stream spend the same 20 (+1 probe): the 22nd is refused on both', async () => {
    const headers = { 'x-forwarded-for': '198.51.100.41' };
    const randomToken = () => `cmn_${randomBytes(32).toString('base64url')}`;
    const http: number[] = [];
    for (let i = 0; i < 10; i++) http.push((await s.call('GET', '/api/v1/ai/me', { token: randomToken(), headers })).status);
    expect(http).toEqual(Array(10).fill(401));
    const c = await StreamClient.open(s.url, { headers });
    const codes: string[] = [];
    for (let i = 0; i < 12; i++) codes.push((await c.request('auth', { token: randomToken() })).error?.code);
    // 10 + 11 looked up (the budget of 20 and the one probe), then refused before any lookup.
    expect(codes).toEqual([...Array(11).fill('UNAUTHORIZED'), 'RATE_LIMITED']);
    expect((await s.call('GET', '/api/v1/ai/me', { token: randomToken(), headers })).status).toBe(429);
    c.close();
  });
});
