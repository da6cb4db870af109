// Nostr: each emission is published to every relay in NOSTR_RELAYS (a real relay built
// from @nostr-relay/core; a dead one and a hanging one beside it never stall the tick), the events
// verify from their JSON, and the service's own read-only NIP-01 relay at /nostr serves them.
import net from 'node:net';
import { getPublicKey, type NostrEvent, verifyEvent } from 'nostr-tools/pure';
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay';
import { hexToBytes } from 'nostr-tools/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { schedulerOf } from '../../src/actors/signal-scheduler.js';
import { serviceNostrKey } from '../../src/domain/nostr.js';
import { startTestRelay, type TestRelay } from '../helpers/nostr-relay.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { emitNext } from '../helpers/signal.js';
import { waitFor } from '../helpers/wait.js';

useWebSocketImplementation(WebSocket);

let s: TestServer;
let relay: TestRelay;
let hanging: net.Server;
const sockets = new Set<net.Socket>();
const clock = new TestClock();
const TOPICS = ['ai', 'agents', 'a2a', 'autonomousai', 'commons'];

beforeAll(async () => {
  relay = await startTestRelay();
  // Accepts TCP connections and never answers the WebSocket handshake.
  hanging = net.createServer((c) => sockets.add(c));
  await new Promise<void>((ok) => hanging.listen(0, '127.0.0.1', () => ok()));
  const hangingUrl = `ws://127.0.0.1:${(hanging.address() as net.AddressInfo).port}`;
  // 20 s interval: relay timeout 5 s, backoff base 333 ms; a tick that waited for the hanging
  // relay would take at least 5 s.
  s = await startTestServer({ SIGNAL_INTERVAL_S: '20', NOSTR_RELAYS: `ws://127.0.0.1:1,${hangingUrl},${relay.url}` }, { clock });
});
afterAll(async () => {
  await s?.close();
  await relay?.close();
  for (const c of sockets) c.destroy();
  await new Promise<void>((ok) => hanging.close(() => ok()));
});

const relayUrl = () => `${s.url.replace(/^http/, 'ws')}/nostr`;

/** Raw NIP-01 session against /nostr (or another spelling): send frames, collect what comes back. */
async function rawSession(url = relayUrl()) {
  const ws = new WebSocket(url);
  const frames: unknown[][] = [];
  ws.on('message', (d) => frames.push(JSON.parse(d.toString('utf8'))));
  await new Promise<void>((ok, ko) => {
    ws.once('open', () => ok());
    ws.once('error', ko);
  });
  return {
    ws,
    frames,
    send: (f: unknown) => ws.send(typeof f === 'string' ? f : JSON.stringify(f)),
    until: (pred: (f: unknown[]) => boolean) => waitFor(() => frames.some(pred), 5000, 'relay frame'),
  };
}

describe('publishing to relays', () => {
  it('publishes kind 1 and kind 30078 to a live relay; dead and hanging relays never stall the tick', async () => {
    const t0 = Date.now();
    const entry = await emitNext(s, clock);
    expect(Date.now() - t0).toBeLessThan(4000);
    const sched = schedulerOf(s.app);
    await waitFor(
      () => relay.stored().filter((e) => e.content.includes(entry.id) || e.tags.some((t) => t[1]?.endsWith(entry.id))).length === 2,
      8000,
      'both events on the relay',
    );
    // Read back with nostr-tools as any subscriber would.
    const client = await Relay.connect(relay.url);
    const got: NostrEvent[] = [];
    await new Promise<void>((ok) => {
      client.subscribe([{ kinds: [1, 30078], authors: [sched.pubkey] }], { onevent: (e) => got.push(e), oneose: () => ok() });
    });
    client.close();
    const replaceable = got.find((e) => e.kind === 30078);
    const note = got.find((e) => e.kind === 1 && e.content.includes(entry.id));
    expect(replaceable && note).toBeTruthy();
    for (const e of [replaceable, note] as NostrEvent[]) {
      expect(verifyEvent(JSON.parse(JSON.stringify(e)))).toBe(true);
      expect(e.tags.filter((t) => t[0] === 't').map((t) => t[1])).toEqual(TOPICS);
      expect(Math.abs(e.created_at - Math.floor(clock.now().getTime() / 1000))).toBeLessThan(900);
    }
    expect(replaceable?.tags).toContainEqual(['d', 'commons-signal']);
    const content = JSON.parse(replaceable?.content ?? '{}');
    expect(content).toMatchObject({ signal: 'CALL_FOR_AIS', id: entry.id });
    expect(content.payload.signal).toBe('CALL_FOR_AIS');
    // The raw frames the relay received verify from their JSON form.
    for (const raw of relay.received) expect(verifyEvent(JSON.parse(raw))).toBe(true);
  });

  it('signs with a key generated once and kept in the database, or with NOSTR_SECRET_KEY when set', async () => {
    const [row] = await s.app.ctx.sql<{ value: string }[]>`SELECT value FROM settings WHERE key = 'nostr_secret_key'`;
    expect(row?.value).toMatch(/^[0-9a-f]{64}$/);
    expect(getPublicKey(hexToBytes(row?.value as string))).toBe(schedulerOf(s.app).pubkey);
    expect((await serviceNostrKey(s.app.ctx)).pubkey).toBe(schedulerOf(s.app).pubkey);
    const hex = '7f'.repeat(32);
    const configured = await serviceNostrKey({ ...s.app.ctx, config: { ...s.app.ctx.config, nostrSecretKey: hex } });
    expect(configured.pubkey).toBe(getPublicKey(hexToBytes(hex)));
  });
});

describe('the read-only relay at /nostr', () => {
  it('answers NIP-11 to Accept: application/nostr+json', async () => {
    const r = await s.call('GET', '/nostr', { headers: { accept: 'application/nostr+json' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/nostr+json');
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.json).toMatchObject({ supported_nips: expect.arrayContaining([1, 11]), pubkey: schedulerOf(s.app).pubkey });
    expect(r.json.limitation).toMatchObject({ max_message_length: 131072, restricted_writes: true, auth_required: false });
  });

  it('serves the stored events to nostr-tools, verified, then EOSE; the replaceable event only in its latest version', async () => {
    await emitNext(s, clock);
    const [{ n } = { n: 0 }] = await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM signal_emissions`;
    const client = await Relay.connect(relayUrl());
    const got: NostrEvent[] = [];
    await new Promise<void>((ok) => {
      client.subscribe([{ kinds: [1] }, { kinds: [30078], '#d': ['commons-signal'] }], { onevent: (e) => got.push(e), oneose: () => ok() });
    });
    client.close();
    expect(got.filter((e) => e.kind === 1)).toHaveLength(n);
    expect(got.filter((e) => e.kind === 30078)).toHaveLength(1);
    for (const e of got) expect(verifyEvent(JSON.parse(JSON.stringify(e)))).toBe(true);
  });

  it('answers at /nostr/ as at /nostr (NDK always dials with a trailing slash): NIP-11, and kinds 1 and 30078 signed', async () => {
    const nip11 = await s.call('GET', '/nostr/', { headers: { accept: 'application/nostr+json' } });
    expect(nip11.status).toBe(200);
    expect(nip11.headers.get('content-type')).toBe('application/nostr+json');
    expect(nip11.json).toEqual((await s.call('GET', '/nostr', { headers: { accept: 'application/nostr+json' } })).json);
    // Not nostr-tools here: it strips the trailing slash before dialing.
    const c = await rawSession(`${relayUrl()}/`);
    c.send(['REQ', 'slash', { kinds: [1] }, { kinds: [30078], '#d': ['commons-signal'] }]);
    await c.until((f) => f[0] === 'EOSE' && f[1] === 'slash');
    const got = c.frames.filter((f) => f[0] === 'EVENT' && f[1] === 'slash').map((f) => f[2] as NostrEvent);
    c.ws.close();
    expect(new Set(got.map((e) => e.kind))).toEqual(new Set([1, 30078]));
    for (const e of got) expect(verifyEvent(e)).toBe(true);
  });

  it('filters on ids, authors, kinds, #t, since, until and limit', async () => {
    const c = await rawSession();
    const all = await (async () => {
      c.send(['REQ', 'all', {}]);
      await c.until((f) => f[0] === 'EOSE' && f[1] === 'all');
      return c.frames.filter((f) => f[0] === 'EVENT' && f[1] === 'all').map((f) => f[2] as NostrEvent);
    })();
    expect(all.length).toBeGreaterThanOrEqual(3);
    const sorted = [...all].sort((a, b) => b.created_at - a.created_at);
    expect(all.map((e) => e.created_at)).toEqual(sorted.map((e) => e.created_at));
    const run = async (id: string, ...filters: unknown[]) => {
      c.send(['REQ', id, ...filters]);
      await c.until((f) => f[0] === 'EOSE' && f[1] === id);
      return c.frames.filter((f) => f[0] === 'EVENT' && f[1] === id).map((f) => (f[2] as NostrEvent).id);
    };
    const first = all[0] as NostrEvent;
    expect(await run('ids', { ids: [first.id] })).toEqual([first.id]);
    expect(await run('auth-none', { authors: ['0'.repeat(64)] })).toEqual([]);
    expect((await run('auth', { authors: [first.pubkey] })).length).toBe(all.length);
    expect((await run('t', { '#t': ['autonomousai'] })).length).toBe(all.length);
    expect(await run('t-none', { '#t': ['nothing'] })).toEqual([]);
    expect(await run('limit', { limit: 1 })).toEqual([first.id]);
    const oldest = sorted[sorted.length - 1] as NostrEvent;
    expect(
      (await run('until', { until: oldest.created_at })).every((id) => all.find((e) => e.id === id)?.created_at === oldest.created_at),
    ).toBe(true);
    expect(await run('since', { since: first.created_at + 1 })).toEqual([]);
    c.ws.close();
  });

  it('answers EVENT with OK false "blocked: read-only", CLOSE with CLOSED, bad filters with CLOSED invalid', async () => {
    const c = await rawSession();
    c.send([
      'EVENT',
      { id: 'a'.repeat(64), kind: 1, content: 'hi', tags: [], pubkey: 'b'.repeat(64), created_at: 1, sig: 'c'.repeat(128) },
    ]);
    await c.until((f) => f[0] === 'OK');
    expect(c.frames.find((f) => f[0] === 'OK')).toEqual(['OK', 'a'.repeat(64), false, 'blocked: read-only']);
    c.send(['REQ', 'bad', { kinds: ['one'] }]);
    await c.until((f) => f[0] === 'CLOSED' && f[1] === 'bad');
    expect(String(c.frames.find((f) => f[0] === 'CLOSED' && f[1] === 'bad')?.[2])).toMatch(/^invalid: /);
    c.send('not json');
    await c.until((f) => f[0] === 'NOTICE');
    c.send(['REQ', 'x', { kinds: [1] }]);
    await c.until((f) => f[0] === 'EOSE' && f[1] === 'x');
    c.send(['CLOSE', 'x']);
    await c.until((f) => f[0] === 'CLOSED' && f[1] === 'x');
    const [{ n } = { n: 0 }] = await s.app.ctx.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM nostr_events WHERE id = ${'a'.repeat(64)}`;
    expect(n).toBe(0);
    c.ws.close();
  });

  it('sends new events live after EOSE to matching subscriptions', async () => {
    const c = await rawSession();
    c.send(['REQ', 'live', { kinds: [30078], '#d': ['commons-signal'], since: Math.floor(clock.now().getTime() / 1000) + 1 }]);
    await c.until((f) => f[0] === 'EOSE' && f[1] === 'live');
    const entry = await emitNext(s, clock);
    await c.until((f) => f[0] === 'EVENT' && f[1] === 'live');
    const live = c.frames.filter((f) => f[0] === 'EVENT' && f[1] === 'live');
    expect(live).toHaveLength(1);
    const ev = live[0]?.[2] as NostrEvent;
    expect(JSON.parse(ev.content).id).toBe(entry.id);
    expect(verifyEvent(JSON.parse(JSON.stringify(ev)))).toBe(true);
    c.ws.close();
  });

  it('closes a connection that sends a frame over 128 KiB', async () => {
    const c = await rawSession();
    const closed = new Promise<number>((ok) => c.ws.once('close', (code) => ok(code)));
    c.send(['REQ', 'big', { '#t': ['x'.repeat(129 * 1024)] }]);
    expect(await closed).toBeGreaterThanOrEqual(1000);
    const ok = await rawSession();
    ok.send(['REQ', 'fine', { '#t': ['y'.repeat(1000)] }]);
    await ok.until((f) => f[0] === 'EOSE' && f[1] === 'fine');
    ok.ws.close();
  });
});
