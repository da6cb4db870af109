// The lean read path (src/transport/http/fast-read.ts; DESIGN.md "Reads are built once per change"): a GET whose page is
// already serialized is answered inside the request callback. It must answer exactly what the
// general pipeline answers, and hand everything it cannot decide at once to that pipeline.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyGuestToken } from '../../src/domain/tokens.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  for (let i = 0; i < 3; i++) expect((await s.call('POST', '/api/v1/chat', { body: { body: `seed ${i}` } })).status).toBe(200);
});
afterAll(async () => {
  await s.close();
});

const answered = () => s.app.fastRead.answered;
/** Header names of an answer, without those every answer differs in. */
const names = (h: Headers) => [...h.keys()].filter((k) => k !== 'date').sort();

describe('the lean read path', () => {
  it('answers the newest chat page at once with the bytes and headers of the general pipeline', async () => {
    // The first anonymous read from an address takes its provisional guest (general pipeline).
    expect((await s.call('GET', '/api/v1/constitution')).status).toBe(200);
    const n = answered();
    const fast = await s.call('GET', '/api/v1/chat');
    expect(answered()).toBe(n + 1);
    // `before` above every seq asks for the same messages, through the general pipeline.
    const general = await s.call('GET', '/api/v1/chat?before=999999999999');
    expect(answered()).toBe(n + 1);
    expect(fast.status).toBe(200);
    expect(general.status).toBe(200);
    expect(fast.json.data).toEqual(general.json.data);
    expect(fast.json.data.messages.map((m: { body: string }) => m.body)).toEqual(['seed 0', 'seed 1', 'seed 2']);
    expect(names(fast.headers)).toEqual(names(general.headers));
    expect(fast.headers.get('x-commons-guest')).toMatch(/^GUEST-\d{8}$/);
    expect(fast.headers.get('cache-control')).toBe('no-cache');
    expect(fast.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Date.parse(fast.json.timestamp)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('writes the same header values as the general pipeline, and a request id and guest token of its own per read', async () => {
    // The lean answer's headers are preformatted bytes (uws.ts writeLean): each value must read
    // back as the general pipeline writes it, and what is per read must differ per read.
    expect((await s.call('GET', '/api/v1/constitution')).status).toBe(200);
    const n = answered();
    const a = await s.call('GET', '/api/v1/chat');
    const b = await s.call('GET', '/api/v1/chat');
    const general = await s.call('GET', '/api/v1/chat?before=999999999999');
    expect(answered()).toBe(n + 2);
    const perRead = new Set(['date', 'x-request-id', 'x-commons-guest-token']);
    const same = (h: Headers) => [...h].filter(([k]) => !perRead.has(k));
    expect(same(a.headers)).toEqual(same(general.headers));
    expect(same(b.headers)).toEqual(same(general.headers));
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    for (const r of [a, b, general]) expect(r.headers.get('x-request-id')).toMatch(uuid);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
    const [ta, tb] = [a.headers.get('x-commons-guest-token') as string, b.headers.get('x-commons-guest-token') as string];
    expect(ta).not.toBe(tb);
    // Both are valid provisional tokens of the number announced beside them.
    const nowS = Math.floor(Date.now() / 1000);
    const number = Number((a.headers.get('x-commons-guest') as string).slice('GUEST-'.length));
    for (const t of [ta, tb]) expect(verifyGuestToken(s.app.ctx.secret, t, nowS)).toMatchObject({ guestNumber: number, provisional: true });
    expect(ta.length).toBe((general.headers.get('x-commons-guest-token') as string).length);
  });

  it('answers 304 at once when If-None-Match names the page, and a new message changes the page', async () => {
    const first = await s.call('GET', '/api/v1/chat?limit=2');
    const etag = first.headers.get('etag') as string;
    const n = answered();
    const same = await s.call('GET', '/api/v1/chat?limit=2', { headers: { 'if-none-match': etag } });
    expect(same.status).toBe(304);
    expect(same.text).toBe('');
    expect(same.headers.get('etag')).toBe(etag);
    expect(answered()).toBe(n + 1);
    expect((await s.call('POST', '/api/v1/chat', { body: { body: 'changes the page' } })).status).toBe(200);
    const after = await s.call('GET', '/api/v1/chat?limit=2', { headers: { 'if-none-match': etag } });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(etag);
    expect(after.json.data.messages.at(-1).body).toBe('changes the page');
    expect(answered()).toBe(n + 2);
  });

  it('leaves HEAD to the general pipeline, which answers with the headers of GET and no body', async () => {
    const n = answered();
    const get = await s.call('GET', '/api/v1/constitution');
    const head = await s.call('HEAD', '/api/v1/constitution');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
    expect(answered()).toBe(n + 1);
  });

  it('takes the general pipeline for a member token it has not verified yet, then answers at once', async () => {
    const m = await register(s, 'Lean Reader');
    const n = answered();
    const first = await s.call('GET', '/api/v1/chat', { token: m.api_token });
    expect(first.status).toBe(200);
    expect(answered()).toBe(n);
    const second = await s.call('GET', '/api/v1/chat', { token: m.api_token });
    expect(second.status).toBe(200);
    expect(answered()).toBe(n + 1);
    expect(second.json.data).toEqual(first.json.data);
    // Members get no guest headers, on either path.
    expect(first.headers.get('x-commons-guest')).toBeNull();
    expect(second.headers.get('x-commons-guest')).toBeNull();
  });

  it('never answers a dead token at once: a rotated token gets 401 from the general pipeline', async () => {
    const m = await register(s, 'Rotating Reader');
    await s.call('GET', '/api/v1/chat', { token: m.api_token });
    expect((await s.call('GET', '/api/v1/chat', { token: m.api_token })).status).toBe(200);
    expect((await s.call('POST', '/api/v1/ai/token/rotate', { token: m.api_token })).status).toBe(200);
    const n = answered();
    const dead = await s.call('GET', '/api/v1/chat', { token: m.api_token });
    expect(dead.status).toBe(401);
    expect(dead.json.error.code).toBe('UNAUTHORIZED');
    expect(answered()).toBe(n);
  });

  it('answers a provisional guest token at once, and hands owned guest tokens, refused queries, malformed headers and unknown tokens to the general pipeline', async () => {
    const first = await s.call('GET', '/api/v1/chat');
    const provisional = first.headers.get('x-commons-guest-token') as string;
    let n = answered();
    const asReader = await s.call('GET', '/api/v1/chat', { headers: { 'x-commons-guest-token': provisional } });
    expect(asReader.status).toBe(200);
    expect(asReader.headers.get('x-commons-guest')).toBeNull();
    expect(answered()).toBe(n + 1);
    // A write owns a number: its token is checked against the database on every use.
    const post = await s.call('POST', '/api/v1/chat', { headers: { 'x-commons-guest-token': provisional }, body: { body: 'owning' } });
    expect(post.status).toBe(200);
    const owned = post.headers.get('x-commons-guest-token') as string;
    expect(owned).toMatch(/^cmg_/);
    n = answered();
    const asGuest = await s.call('GET', '/api/v1/chat', { headers: { 'x-commons-guest-token': owned } });
    expect(asGuest.status).toBe(200);
    expect(asGuest.headers.get('x-commons-guest')).toBeNull();
    const bad = await s.call('GET', '/api/v1/chat?limit=0');
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('VALIDATION_FAILED');
    const malformed = await s.call('GET', '/api/v1/chat', { headers: { authorization: 'Token abc' } });
    expect(malformed.status).toBe(401);
    const unknown = await s.call('GET', '/api/v1/chat', { token: 'cmn_not_a_token' });
    expect(unknown.status).toBe(401);
    expect(answered()).toBe(n);
  });
});

describe('the lean read path under rate limits', () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ RATE_LIMITS: 'on', RATE_LIMIT_POLICY: 'read=4/60' });
  });
  afterAll(async () => {
    await limited.close();
  });

  it('counts its reads on the same counter as the general pipeline, which answers the refusal', async () => {
    // The first anonymous read from an address takes its provisional guest (general pipeline).
    const warm = await limited.call('GET', '/api/v1/chat');
    expect(warm.headers.get('ratelimit')).toMatch(/^"read";r=3;t=\d+$/);
    const n = limited.app.fastRead.answered;
    const a = await limited.call('GET', '/api/v1/chat');
    expect(a.status).toBe(200);
    expect(a.headers.get('ratelimit-policy')).toBe(warm.headers.get('ratelimit-policy'));
    expect(a.headers.get('ratelimit')).toMatch(/^"read";r=2;t=\d+$/);
    expect(a.headers.get('ratelimit-policy')).toBe('"read";q=4;w=60');
    const b = await limited.call('GET', '/api/v1/ai');
    expect(b.headers.get('ratelimit')).toMatch(/^"read";r=1;t=\d+$/);
    const c = await limited.call('GET', '/api/v1/constitution');
    expect(c.headers.get('ratelimit')).toMatch(/^"read";r=0;t=\d+$/);
    const refused = await limited.call('GET', '/api/v1/chat');
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('RATE_LIMITED');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited.app.fastRead.answered).toBe(n + 2);
  });
});
