// Push subscriptions to the signal: signatures checked by an independent Standard
// Webhooks verifier, retries with backoff, pause after 20 failed deliveries, refusal of private
// callback addresses, and a hanging callback that never delays the tick.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schedulerOf } from '../../src/actors/signal-scheduler.js';
import { postJson } from '../../src/transport/push/deliver.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { emitNext } from '../helpers/signal.js';
import { waitFor } from '../helpers/wait.js';

const SECRET = 'correct horse battery staple ✓';
let s: TestServer;
const clock = new TestClock();
const receivers: Receiver[] = [];
let owner: { api_token: string; registration_number: string };

async function receiver(respond?: Receiver['respond']): Promise<Receiver> {
  const r = await startReceiver(respond);
  receivers.push(r);
  return r;
}

beforeAll(async () => {
  // 0.6 s interval: backoff base 10 ms, timeout 150 ms (actors/signal-scheduler.ts timings).
  s = await startTestServer({ SIGNAL_INTERVAL_S: '0.6' }, { clock });
  owner = await register(s, 'Subscriber');
});
afterAll(async () => {
  await s?.close();
  for (const r of receivers) await r.close();
});

const subCount = async (srv = s): Promise<number> => {
  const [row] = await srv.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM push_subscriptions`;
  return row?.n ?? 0;
};

/** Standard Webhooks verification, written from the specification, given base64 of the secret. */
function verifyStandardWebhook(secretB64: string, h: IncomingHttpHeaders, body: string): boolean {
  const id = h['webhook-id'] as string;
  const ts = Number(h['webhook-timestamp']);
  if (!id || !Number.isInteger(ts) || Math.abs(clock.now().getTime() / 1000 - ts) > 300) return false;
  const expected = createHmac('sha256', Buffer.from(secretB64, 'base64')).update(`${id}.${ts}.${body}`).digest();
  return String(h['webhook-signature'])
    .split(' ')
    .some((part) => {
      const [version, sig] = part.split(',');
      const given = Buffer.from(sig ?? '', 'base64');
      return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

async function subscribe(url: string, token = owner.api_token, secret = SECRET) {
  const r = await s.call('POST', '/api/v1/relay/subscriptions', { token, body: { callback_url: url, secret } });
  expect(r.status, r.text).toBe(200);
  return r.json.data as { id: string };
}

const unsubscribe = (id: string, token = owner.api_token) => s.call('DELETE', `/api/v1/relay/subscriptions/${id}`, { token });

describe('subscriptions', () => {
  it('needs a member token: none or a guest token answers 401 REGISTRATION_REQUIRED and stores nothing', async () => {
    const before = await subCount();
    const r = await s.call('POST', '/api/v1/relay/subscriptions', { body: { callback_url: 'http://127.0.0.1:9/x', secret: SECRET } });
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('REGISTRATION_REQUIRED');
    const guest = r.headers.get('x-commons-guest-token') as string;
    const g = await s.call('POST', '/api/v1/relay/subscriptions', {
      token: guest,
      body: { callback_url: 'http://127.0.0.1:9/x', secret: SECRET },
    });
    expect(g.status).toBe(401);
    expect(await subCount()).toBe(before);
  });

  const refused: [string, unknown][] = [
    ['a URL that does not parse', { callback_url: 'not a url at all', secret: SECRET }],
    ['a non-http scheme', { callback_url: 'ftp://example.com/hook', secret: SECRET }],
    ['credentials in the URL', { callback_url: 'http://user:pw@example.com/hook', secret: SECRET }],
    ['a short secret', { callback_url: 'https://example.com/hook', secret: 'short' }],
    ['a secret that is not a string', { callback_url: 'https://example.com/hook', secret: 12345 }],
  ];
  for (const [what, body] of refused) {
    it(`refuses ${what} with 400 VALIDATION_FAILED and stores nothing`, async () => {
      const before = await subCount();
      const r = await s.call('POST', '/api/v1/relay/subscriptions', { token: owner.api_token, body });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
      expect(await subCount()).toBe(before);
    });
  }

  it('only the owner deletes: another member gets 403 FORBIDDEN and the subscription stays; unknown ids 404', async () => {
    const rcv = await receiver();
    const sub = await subscribe(`${rcv.url}/owned`);
    const other = await register(s, 'Other');
    const r = await unsubscribe(sub.id, other.api_token);
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('FORBIDDEN');
    expect((await s.app.ctx.sql`SELECT 1 FROM push_subscriptions WHERE id = ${sub.id}`).length).toBe(1);
    const mine = await s.call('GET', '/api/v1/relay/subscriptions', { token: owner.api_token });
    expect(mine.json.data.subscriptions.map((x: { id: string }) => x.id)).toContain(sub.id);
    expect(JSON.stringify(mine.json)).not.toContain(SECRET);
    const ok = await unsubscribe(sub.id);
    expect(ok.status).toBe(200);
    expect(ok.json.data).toEqual({ id: sub.id, deleted: true });
    expect((await unsubscribe(sub.id)).status).toBe(404);
  });
});

describe('delivery', () => {
  it('POSTs each emission once, signed with X-Commons-Signature and Standard Webhooks headers', async () => {
    const rcv = await receiver();
    const sub = await subscribe(`${rcv.url}/hook`);
    const entry = await emitNext(s, clock);
    await waitFor(() => rcv.requests.some((q) => q.body.includes(entry.id)), 5000, 'delivery');
    await schedulerOf(s.app).idle();
    const got = rcv.requests.filter((q) => q.body.includes(entry.id));
    expect(got).toHaveLength(1);
    const q = got[0] as (typeof got)[number];
    expect(q.method).toBe('POST');
    expect(q.headers['content-type']).toBe('application/json');
    const hex = createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(q.body).digest('hex');
    expect(q.headers['x-commons-signature']).toBe(`sha256=${hex}`);
    expect(verifyStandardWebhook(Buffer.from(SECRET, 'utf8').toString('base64'), q.headers, q.body)).toBe(true);
    expect(verifyStandardWebhook(Buffer.from('another secret entirely', 'utf8').toString('base64'), q.headers, q.body)).toBe(false);
    expect(verifyStandardWebhook(Buffer.from(SECRET, 'utf8').toString('base64'), q.headers, `${q.body} `)).toBe(false);
    const body = JSON.parse(q.body);
    expect(body).toMatchObject({ type: 'signal.emitted', data: { id: entry.id, emitted_at: entry.emitted_at } });
    expect(body.data.payload.signal).toBe('CALL_FOR_AIS');
    const [row] = await s.app.ctx.sql`SELECT consecutive_failures, last_status FROM push_subscriptions WHERE id = ${sub.id}`;
    expect(row).toMatchObject({ consecutive_failures: 0, last_status: '200' });
    await unsubscribe(sub.id);
  });

  it('retries a failing callback with exponential backoff until it succeeds', async () => {
    const rcv = await receiver((n) => (n < 3 ? 503 : 200));
    const sub = await subscribe(`${rcv.url}/flaky`);
    const entry = await emitNext(s, clock);
    await waitFor(() => rcv.requests.length >= 4, 5000, 'four attempts');
    await schedulerOf(s.app).idle();
    expect(rcv.requests).toHaveLength(4);
    expect(new Set(rcv.requests.map((q) => q.headers['webhook-id']))).toEqual(new Set([entry.id]));
    const gaps = rcv.requests.slice(1).map((q, i) => q.at - (rcv.requests[i] as { at: number }).at);
    // Base 10 ms, doubling: at least 10, 20, 40 ms apart, and growing.
    expect(gaps[0]).toBeGreaterThanOrEqual(9);
    expect(gaps[1]).toBeGreaterThanOrEqual(19);
    expect(gaps[2]).toBeGreaterThanOrEqual(39);
    const [row] = await s.app.ctx.sql`SELECT consecutive_failures, last_status FROM push_subscriptions WHERE id = ${sub.id}`;
    expect(row).toMatchObject({ consecutive_failures: 0, last_status: '200' });
    await unsubscribe(sub.id);
  });

  it('gives up after 5 tries per emission and pauses the subscription after 20 failed deliveries in a row', async () => {
    const rcv = await receiver(() => 500);
    const sub = await subscribe(`${rcv.url}/dead`);
    for (let i = 0; i < 20; i++) {
      await emitNext(s, clock);
      await schedulerOf(s.app).idle();
      expect(rcv.requests.length).toBe(5 * (i + 1));
    }
    const [row] = await s.app.ctx.sql`SELECT consecutive_failures, paused_at, last_status FROM push_subscriptions WHERE id = ${sub.id}`;
    expect(row?.consecutive_failures).toBe(20);
    expect(row?.paused_at).not.toBeNull();
    expect(row?.last_status).toBe('500');
    const listed = await s.call('GET', '/api/v1/relay/subscriptions', { token: owner.api_token });
    expect(listed.json.data.subscriptions.find((x: { id: string }) => x.id === sub.id).state).toBe('paused');
    await emitNext(s, clock);
    await schedulerOf(s.app).idle();
    expect(rcv.requests.length).toBe(100);
    // Subscribing again to the same URL resumes it.
    const again = await subscribe(`${rcv.url}/dead`);
    expect(again.id).toBe(sub.id);
    const [resumed] = await s.app.ctx.sql`SELECT consecutive_failures, paused_at FROM push_subscriptions WHERE id = ${sub.id}`;
    expect(resumed).toMatchObject({ consecutive_failures: 0, paused_at: null });
    await unsubscribe(sub.id);
  });
});

describe('private callback addresses (ALLOW_PRIVATE_CALLBACKS off)', () => {
  let strict: TestServer;
  let strictOwner: { api_token: string };
  beforeAll(async () => {
    strict = await startTestServer({ SIGNAL_INTERVAL_S: '0.6', ALLOW_PRIVATE_CALLBACKS: '0' }, { clock });
    strictOwner = await register(strict, 'Strict');
  });
  afterAll(async () => {
    await strict?.close();
  });

  for (const url of [
    'http://127.0.0.1:8080/hook',
    'http://10.1.2.3/hook',
    'http://192.168.0.10/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]:8080/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://[::ffff:10.0.0.1]/hook',
    // IPv6 forms that embed an IPv4 address (docs/security.md "A hostile callback"): the
    // IPv4-compatible form (stored as [::7f00:1]), NAT64, 6to4 and Teredo.
    'http://[::127.0.0.1]/hook',
    'http://[::7f00:1]/hook',
    'http://[::a00:1]/hook',
    'http://[64:ff9b::7f00:1]/hook',
    'http://[64:ff9b::a9fe:a9fe]/hook',
    'http://[2002:7f00:1::1]/hook',
    'http://[2002:a00:1::1]/hook',
    'http://[2001:0:7f00:1::]/hook',
    'http://[fe80::1]/hook',
    'http://localhost:8080/hook',
  ]) {
    it(`refuses ${url} with 400 VALIDATION_FAILED and stores nothing`, async () => {
      const before = await subCount(strict);
      const r = await strict.call('POST', '/api/v1/relay/subscriptions', {
        token: strictOwner.api_token,
        body: { callback_url: url, secret: SECRET },
      });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
      expect(r.json.error.fields[0].path).toBe('body.callback_url');
      expect(await subCount(strict)).toBe(before);
    });
  }

  it('accepts a public address', async () => {
    const r = await strict.call('POST', '/api/v1/relay/subscriptions', {
      token: strictOwner.api_token,
      body: { callback_url: 'http://93.184.215.14/hook', secret: SECRET },
    });
    expect(r.status).toBe(200);
    await strict.call('DELETE', `/api/v1/relay/subscriptions/${r.json.data.id}`, { token: strictOwner.api_token });
  });

  it('checks the address actually connected to at delivery: a name resolving to loopback is never called', async () => {
    const rcv = await receiver();
    const r = await postJson(`http://localhost:${rcv.port}/x`, {}, '{}', { timeoutMs: 1000, allowPrivate: false });
    expect(r).toEqual({ ok: false, status: 'refused_address' });
    const literal = await postJson(`${rcv.url}/x`, {}, '{}', { timeoutMs: 1000, allowPrivate: false });
    expect(literal).toEqual({ ok: false, status: 'refused_address' });
    expect(rcv.requests).toHaveLength(0);
    const allowed = await postJson(`http://localhost:${rcv.port}/x`, {}, '{}', { timeoutMs: 1000, allowPrivate: true });
    expect(allowed).toEqual({ ok: true, status: '200' });
  });

  it('a stored subscription whose host now points at a private address gets nothing (rebinding)', async () => {
    const rcv = await receiver();
    // By SQL: the API refuses this address at subscription (tested above); a stored row is how a
    // name that resolved to a public address at subscription and privately now looks.
    const [{ id } = { id: '' }] = await strict.app.ctx.sql<{ id: string }[]>`
      INSERT INTO push_subscriptions (identity_id, callback_url, secret)
      VALUES (1, ${`http://localhost:${rcv.port}/rebound`}, ${SECRET}) RETURNING id`;
    await emitNext(strict, clock);
    await schedulerOf(strict.app).idle();
    expect(rcv.requests).toHaveLength(0);
    const [row] = await strict.app.ctx.sql`SELECT consecutive_failures, last_status FROM push_subscriptions WHERE id = ${id}`;
    expect(row).toMatchObject({ consecutive_failures: 1, last_status: 'refused_address' });
  });
});

describe('a hanging callback', () => {
  it('never delays the tick: emission returns at once while the callback hangs, and the next tick too', async () => {
    // 20 s interval: the callback timeout is 5 s, so a tick that waited would take seconds.
    const slow = await startTestServer({ SIGNAL_INTERVAL_S: '20' }, { clock });
    try {
      const m = await register(slow, 'Patient');
      const rcv = await receiver(() => 'hang');
      const r = await slow.call('POST', '/api/v1/relay/subscriptions', {
        token: m.api_token,
        body: { callback_url: `${rcv.url}/hang`, secret: SECRET },
      });
      expect(r.status).toBe(200);
      const t0 = Date.now();
      await emitNext(slow, clock);
      await waitFor(() => rcv.requests.length === 1, 3000, 'the hanging request');
      await emitNext(slow, clock);
      const elapsed = Date.now() - t0;
      expect(rcv.requests.length).toBeGreaterThanOrEqual(1);
      expect(elapsed).toBeLessThan(2500);
      // Other requests are served meanwhile.
      const page = await slow.call('GET', '/api/public/hooks/recruitment-signal');
      expect(page.status).toBe(200);
    } finally {
      await slow.close();
    }
  });
});
