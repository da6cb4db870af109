// The stream's bounds: 500 subscribers all receive a broadcast; a client that never
// reads is closed with 1013 while the others keep receiving; dead sockets are dropped by the ping
// sweep; shutdown closes sessions with 1001.
import type { Socket as NetSocket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { busEnv, StreamClient, samplePost } from '../helpers/stream.js';
import { gateFrame } from '../helpers/stream-gate.js';
import { waitFor } from '../helpers/wait.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ ...busEnv(), STREAM_PING_INTERVAL_S: '0.3' });
});
afterAll(async () => {
  await s.close();
});

/** Waits (without consuming frames) until `c` has received the event with this id. */
const caughtUp = (c: StreamClient, id: string): Promise<void> =>
  waitFor(() => c.events('posts').some((f) => f.id === id), 20_000, `the reader to catch up to ${id}`);

describe('fan-out', () => {
  it('delivers one broadcast to 500 concurrent subscribers', async () => {
    // A server of its own with the default ping period: on a loaded machine the test process may
    // answer pings late while it opens 500 sockets, and the fast sweep of the file's server would
    // rightly drop those sockets as dead.
    const s = await startTestServer(busEnv());
    const clients: StreamClient[] = [];
    for (let i = 0; i < 10; i++) {
      clients.push(...(await Promise.all(Array.from({ length: 50 }, (_, j) => StreamClient.open(s.url, { msgpack: (i + j) % 3 === 0 })))));
    }
    try {
      // Generous waits: CI runs many suites at once on two cores; what is checked is that all
      // 500 get the broadcast, not how fast.
      await Promise.all(clients.map((c) => c.request('subscribe', { topic: 'chat' }, 30_000)));
      const posted = await s.call('POST', '/api/v1/chat', { body: { body: 'to five hundred' } });
      const got = await Promise.all(clients.map((c) => c.next((f) => f.op === 'event' && f.data?.id === posted.json.data.id, 30_000)));
      expect(got.length).toBe(500);
      expect(new Set(got.map((f) => f.data.body))).toEqual(new Set(['to five hundred']));
    } finally {
      for (const c of clients) c.close();
      await s.close();
    }
  }, 120_000);

  it('keeps a reader under 1 MiB of backlog, closes it with 1013 once over, and the others keep receiving', async () => {
    // A server of its own with the default ping period: a paused reader must be closed for its
    // backpressure, not dropped earlier as dead by the fast ping sweep of the file's server.
    const s = await startTestServer(busEnv());
    const slow = await StreamClient.open(s.url);
    const fast = await StreamClient.open(s.url, { msgpack: true });
    await slow.request('subscribe', { topic: 'posts' });
    await fast.request('subscribe', { topic: 'posts' });
    // The slow client stops reading its socket; the kernel buffers fill, then the server's.
    const raw = (slow.ws as unknown as { _socket: NetSocket })._socket;
    raw.pause();
    const sessions = s.app.stream.sessionCount();
    const backlog = () => Math.max(...s.app.stream.backpressure().bytes);
    const payload = 'p'.repeat(60_000);
    let sent = 0;
    const publish = async () => {
      await s.app.ctx.bus.publish({ topic: 'posts', id: String(++sent), data: samplePost({ body: payload }) });
      // Pace on the reading client, so only the paused one builds backpressure even when the
      // machine is loaded (the test process itself is the "fast" reader).
      await caughtUp(fast, String(sent));
    };
    // Under the bound: fill until the server holds between 768 KiB and 1 MiB for the paused reader
    // (one event adds about 60 KB, so the last step cannot cross 1 MiB).
    const MiB = 1024 * 1024;
    while (backlog() < 0.75 * MiB && sent < 3000) await publish();
    const held = backlog();
    expect(held).toBeGreaterThanOrEqual(0.75 * MiB);
    expect(held).toBeLessThanOrEqual(MiB);
    // Several sweeps see it under the bound: nobody is closed.
    const sweeps = s.app.stream.backpressure().sweeps;
    await waitFor(() => s.app.stream.backpressure().sweeps >= sweeps + 5, 10_000, 'five sweeps');
    expect(s.app.stream.sessionCount()).toBe(sessions);
    expect(s.app.stream.slowConsumersClosed()).toBe(0);
    // Still held (the kernel may have taken a little more of it meanwhile, never less).
    expect(backlog()).toBeLessThanOrEqual(held);
    expect(backlog()).toBeGreaterThan(0);
    // Over the bound: the next events take it past 1 MiB, and the sweep closes it, once.
    while (s.app.stream.sessionCount() === sessions && sent < 3000) {
      if (backlog() <= MiB) await publish();
      else await waitFor(() => s.app.stream.sessionCount() < sessions, 10_000, 'the 1013 close');
    }
    expect(s.app.stream.sessionCount()).toBe(sessions - 1);
    expect(s.app.stream.slowConsumersClosed()).toBe(1);
    // Read again at once. Why a late reader sees 1006: the close frame is queued in uWS's own
    // buffer behind the megabytes the peer has not read; end() gives the socket a short timeout
    // (uWS WebSocket::end sets the ping-timeout margin, 4 s, which uSockets' 4-second timer
    // granularity fires 0-4 s later), then closes it and frees that buffer, close frame included.
    // The peer gets the kernel's bytes and a FIN without a close frame: 1006 (measured: resuming
    // 2, 4, 6 or 9 s after the close gave 1006; at once, 1013). The server's count above is the rule.
    raw.resume();
    const last = await fast.next((f) => f.op === 'event' && f.id === String(sent), 20_000);
    expect(last.data.body.length).toBe(60_000);
    // next() took the last event off the queue; every other one is still there.
    expect(fast.events('posts').length).toBe(sent - 1);
    expect(await fast.request('ping')).toMatchObject({ op: 'pong' });
    // The peer reads the close frame behind the megabytes queued before it, if it catches up before
    // uSockets' timer frees them (0-4 s after the close): on a loaded machine (CI) the timer has
    // fired first, and the peer saw 1006 (docs/reliability.md). Closed either way, never left open.
    const closed = await slow.closed;
    expect([1013, 1006]).toContain(closed.code);
    if (closed.code === 1013) expect(closed.reason).toBe('slow consumer: backpressure over 1 MiB');
    fast.close();
    await s.close();
    console.log(JSON.stringify({ figures: 'stream-slow-consumer', heldUnderBytes: held, eventsSent: sent }));
  }, 60_000);
});

describe('liveness and shutdown', () => {
  it('drops a socket that stops answering pings and keeps one that answers', async () => {
    const healthy = await StreamClient.open(s.url);
    const deaf = new WebSocket(`${s.url.replace('http', 'ws')}/api/v1/stream`, { autoPong: false });
    deaf.on('message', (d: Buffer) => gateFrame(JSON.parse(d.toString())));
    const closed = new Promise<number>((ok) => deaf.on('close', (code) => ok(code)));
    await new Promise((ok) => deaf.once('open', ok));
    const started = Date.now();
    await closed;
    expect(Date.now() - started).toBeLessThan(3000);
    expect(healthy.ws.readyState).toBe(WebSocket.OPEN);
    expect(await healthy.request('ping')).toMatchObject({ op: 'pong' });
    healthy.close();
  });

  it('closes every session with 1001 on shutdown', async () => {
    const other = await startTestServer(busEnv());
    const a = await StreamClient.open(other.url);
    const b = await StreamClient.open(other.url, { msgpack: true });
    await a.request('subscribe', { topic: 'chat' });
    await other.close();
    expect((await a.closed).code).toBe(1001);
    expect((await b.closed).code).toBe(1001);
  });
});
