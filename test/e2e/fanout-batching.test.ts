// Adaptive fan-out batching (DESIGN.md "Fan-out publishes what is ready together"; the stream's
// guarantees in DECISIONS.md "Real-time stream"): an event on an idle fan-out is published at once;
// a burst goes out in few publish bursts, in order, to every subscriber; and a session that joins
// after a replay while events wait in the queue gets each event exactly once.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HOLD_MS } from '../../src/transport/ws/fanout.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { busEnv, type Frame, StreamClient, samplePost } from '../helpers/stream.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(busEnv());
});
afterAll(async () => {
  await s.close();
});

/** Waits until the fan-out is idle (other topics' events, e.g. presence, may keep it busy briefly). */
async function quiet(): Promise<void> {
  while (!s.app.stream.fanout.idle) await new Promise((ok) => setTimeout(ok, HOLD_MS));
}
const ids = (frames: Frame[], topic: string) => frames.filter((f) => f.op === 'event' && f.topic === topic).map((f) => Number(f.id));

describe('fan-out batching', () => {
  it('publishes an event on an idle fan-out at once, in the same turn', async () => {
    const c = await StreamClient.open(s.url);
    await c.request('subscribe', { topic: 'posts' });
    await quiet();
    const { fanout } = s.app.stream;
    expect(fanout.idle).toBe(true);
    const before = fanout.published;
    void s.app.ctx.bus.publish({ topic: 'posts', id: '1', data: samplePost({ title: 'idle' }) });
    // Measured before any timer could run: no added delay when idle.
    expect(fanout.published - before).toBe(1);
    expect(await c.next((f) => f.op === 'event' && f.topic === 'posts')).toMatchObject({ id: '1', data: { title: 'idle' } });
    c.close();
  });

  it('sends 100 events that are ready in one turn in that turn, one burst, in order, to every subscriber', async () => {
    const clients = await Promise.all(Array.from({ length: 6 }, (_, i) => StreamClient.open(s.url, { msgpack: i % 2 === 1 })));
    for (const c of clients) await c.request('subscribe', { topic: 'posts' });
    await quiet();
    const { fanout } = s.app.stream;
    const [bursts, published] = [fanout.bursts, fanout.published];
    for (let i = 1; i <= 100; i++) void s.app.ctx.bus.publish({ topic: 'posts', id: String(i), data: samplePost({ title: `post ${i}` }) });
    // Measured before the turn ends: the first event began a burst and the other 99 joined it, so
    // uWS writes them to each socket together (a group commit's posts settle like this). Before,
    // the 99 waited for a timer: two writes per socket and a turn's delay for all but the first.
    expect(fanout.published - published).toBe(200); // once per encoding, per event
    expect(fanout.bursts - bursts).toBe(1);
    // `next` takes the frame off the queue: put it back to check the whole sequence.
    for (const c of clients) c.frames.push(await c.next((f) => f.op === 'event' && f.topic === 'posts' && f.id === '100'));
    const want = Array.from({ length: 100 }, (_, i) => i + 1);
    for (const c of clients) expect(ids(c.frames, 'posts')).toEqual(want);
    for (const c of clients) c.close();
  });

  it('holds events of a later turn within the hold and sends them together, in order, after those before', async () => {
    const c = await StreamClient.open(s.url);
    await c.request('subscribe', { topic: 'posts' });
    const { fanout } = s.app.stream;
    const inside = fanout as unknown as { lastFlush: number; turnOpen: boolean; queue: [string][] };
    let id = 1000;
    await quiet();
    void s.app.ctx.bus.publish({ topic: 'posts', id: String(++id), data: samplePost() }); // idle: at once
    await new Promise((ok) => setImmediate(ok)); // the turn has ended and uWS has written it
    expect(inside.turnOpen).toBe(false);
    const [bursts, published] = [fanout.bursts, fanout.published];
    const first = id + 1;
    // The ten come in a later turn, within the hold, however slow the machine: the fan-out's clock
    // (performance.now) stands at the burst's start while they are published, so they arrive 0 ms
    // after it (on an idle machine, a few microseconds). The hold's timer itself runs on real time.
    const clock = vi.spyOn(performance, 'now').mockReturnValue(inside.lastFlush);
    try {
      for (let i = 0; i < 10; i++) void s.app.ctx.bus.publish({ topic: 'posts', id: String(++id), data: samplePost() });
    } finally {
      clock.mockRestore();
    }
    // All ten wait, and the hold's end sends them in one flush (other topics' events may join).
    expect(fanout.published).toBe(published);
    const queued = inside.queue;
    expect(queued.filter(([topic]) => topic === 'posts')).toHaveLength(10);
    const flush = fanout.flush.bind(fanout);
    let flushed = -1;
    fanout.flush = () => {
      flushed = queued.filter(([topic]) => topic === 'posts').length; // the live queue until flushed
      flush();
    };
    try {
      c.frames.push(await c.next((f) => f.op === 'event' && f.topic === 'posts' && f.id === String(id)));
    } finally {
      fanout.flush = flush;
    }
    expect(flushed).toBe(10);
    expect(fanout.bursts - bursts).toBeGreaterThanOrEqual(1);
    expect(ids(c.frames, 'posts').slice(-11)).toEqual(Array.from({ length: 11 }, (_, i) => first - 1 + i));
    c.close();
  });

  it('joins after a replay with no gap and no duplicate while a burst is queued', async () => {
    const post = (body: string) => s.call('POST', '/api/v1/chat', { body: { body } });
    await post('seed');
    for (let round = 0; round < 5; round++) {
      const c = await StreamClient.open(s.url);
      // Concurrent posts become ready together and wait in the fan-out queue while the
      // subscriber's replay runs; the join must not repeat them.
      const posting = Promise.all(Array.from({ length: 20 }, (_, i) => post(`r${round}-${i}`)));
      const ack = await c.request('subscribe', { topic: 'chat', since: 0 });
      expect(ack.op).toBe('ack');
      const done = await posting;
      const lastSeq = Math.max(...done.map((r) => r.json.data.seq as number));
      c.frames.push(await c.next((f) => f.op === 'event' && f.topic === 'chat' && Number(f.id) === lastSeq));
      const rows = await s.app.ctx.sql<{ seq: number }[]>`
        SELECT seq::float8 AS seq FROM chat_messages WHERE hidden_at IS NULL AND seq <= ${lastSeq} ORDER BY seq`;
      expect(ids(c.frames, 'chat')).toEqual(rows.map((r) => r.seq));
      c.close();
    }
  });
});
