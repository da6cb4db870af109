// Abuse of the stream (DECISIONS.md "Reliability promises"): every op spends from a per-session
// budget, one address holds a bounded number of sessions, a replay is bounded (older history: `replay: "truncated"` and the REST pages), and a
// heartbeat frame costs no database read. Both backends.
import { request } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { OPS_BURST } from '../../src/transport/admission/limits/sessions-per-address.js';
import { REPLAY_MAX } from '../../src/transport/ws/dispatch.js';
import { SESSIONS_PER_ADDRESS } from '../../src/transport/ws/stream.js';
import { scrape, seriesValue } from '../helpers/metrics.js';
import { SharedStore } from '../helpers/nodes.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { busEnv, StreamClient } from '../helpers/stream.js';
import { waitFor } from '../helpers/wait.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ ...busEnv(), RATE_LIMITS: 'on' });
});
afterAll(async () => {
  await s?.close();
});

it('every op spends from the session budget: past the burst, RATE_LIMITED with retry_after_s, then it refills', async () => {
  const c = await StreamClient.open(s.url);
  const n = OPS_BURST + 40;
  for (let i = 0; i < n; i++) c.send({ op: 'ping', ref: `p${i}` });
  const answers = [];
  for (let i = 0; i < n; i++) answers.push(await c.next((f) => f.ref === `p${i}`));
  const pongs = answers.filter((f) => f.op === 'pong').length;
  const refused = answers.filter((f) => f.op === 'error');
  expect(pongs).toBeGreaterThanOrEqual(OPS_BURST);
  expect(pongs).toBeLessThan(n);
  expect(refused.length).toBeGreaterThan(0);
  expect(refused[0]?.error.code).toBe('RATE_LIMITED');
  expect(refused[0]?.error.retry_after_s).toBeGreaterThanOrEqual(1);
  // It refills: after the retry_after_s the refusal announced, an op runs again. Time is the
  // subject here (a budget refilling per second), so the test waits on the clock for it.
  const refusedAt = Date.now();
  const after = (refused[0]?.error.retry_after_s as number) * 1000;
  await waitFor(() => Date.now() - refusedAt >= after, after + 5000, 'the announced refill');
  expect((await c.request('ping')).op).toBe('pong');
  c.close();
});

it('a replay from long ago is bounded: replay "truncated" points at REST, and live follows', async () => {
  // The history is written before the node starts, as a long-lived commons holds it. By SQL: 2,050
  // messages through the API would take minutes under the chat limits and prove nothing more.
  const shared = new SharedStore(busEnv());
  try {
    const first = await shared.start();
    await first.app.ctx
      .sql`INSERT INTO chat_messages (body, guest_number) SELECT 'old-' || g, 1 FROM generate_series(1, ${REPLAY_MAX + 50}::int) g`;
    const again = await shared.restart(first);
    const c = await StreamClient.open(again.url);
    const ack = await c.request('subscribe', { topic: 'chat', since: '0' }, 30_000);
    expect(ack.op).toBe('ack');
    expect(ack.data).toMatchObject({ topic: 'chat', subscribed: true, replayed: REPLAY_MAX, replay: 'truncated', rest: '/api/v1/chat' });
    expect(c.events('chat').length).toBe(REPLAY_MAX);
    const posted = await again.call('POST', '/api/v1/chat', { body: { body: 'live after truncation' } });
    expect(posted.status).toBe(200);
    await c.next((f) => f.op === 'event' && f.data?.body === 'live after truncation', 10_000);
    c.close();
  } finally {
    await shared.close();
  }
});

it('heartbeat frames need no identity row: they go on while the identities table is away', async () => {
  const a = await register(s, 'Stream beater');
  const c = await StreamClient.open(s.url, { token: a.api_token });
  expect((await c.request('heartbeat', { status_note: 'first' })).op).toBe('ack');
  await s.app.ctx.sql`ALTER TABLE identities RENAME TO identities_away`;
  try {
    for (let i = 0; i < 5; i++) {
      const r = await c.request('heartbeat', { status_note: `beat ${i}` });
      expect(r.op, JSON.stringify(r)).toBe('ack');
    }
  } finally {
    await s.app.ctx.sql`ALTER TABLE identities_away RENAME TO identities`;
  }
  // And the last note reaches the database once it accepts writes again.
  await expect
    .poll(
      async () =>
        (
          await s.app.ctx.sql<{ n: string }[]>`SELECT status_note AS n FROM identities WHERE id = ${Number(a.registration_number.slice(3))}`
        )[0]?.n,
      {
        timeout: 10_000,
      },
    )
    .toBe('beat 4');
  c.close();
});

it('one address holds at most SESSIONS_PER_ADDRESS sessions: the next upgrade is refused 429, a closed one frees a place', async () => {
  const open = await Promise.all(Array.from({ length: SESSIONS_PER_ADDRESS }, () => StreamClient.open(s.url)));
  await expect(StreamClient.open(s.url)).rejects.toThrow(/upgrade refused: 429/);
  // The refusal is the API's error envelope, with when to come back.
  const refused = await rawUpgrade(s.url);
  expect(refused.status).toBe(429);
  expect(refused.headers['retry-after']).toBe('60');
  expect(JSON.parse(refused.body)).toMatchObject({ success: false, error: { code: 'RATE_LIMITED', retry_after_s: 60 } });
  const last = open.pop() as StreamClient;
  // Every session of this server is one of ours (the full set above was accepted): the server
  // frees the place in the same step that drops its session gauge, so the gauge is the event.
  const sessions = async () => seriesValue(await scrape(s), 'commons_ws_sessions');
  expect(await sessions()).toBe(SESSIONS_PER_ADDRESS);
  last.close();
  await last.closed;
  await waitFor(async () => (await sessions()) === SESSIONS_PER_ADDRESS - 1, 10_000, 'the server to see the close');
  const again = await StreamClient.open(s.url);
  again.close();
  for (const c of open) c.close();
});

/** An upgrade request the server refuses, read as the plain HTTP answer it is. */
function rawUpgrade(url: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const u = new URL('/api/v1/stream', url);
  return new Promise((ok, ko) => {
    const req = request({
      host: u.hostname,
      port: u.port,
      path: u.pathname,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      },
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      ko(new Error('upgraded'));
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', ko);
    req.end();
  });
}
