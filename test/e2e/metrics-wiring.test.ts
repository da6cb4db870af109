// /metrics fed by the running parts, scraped from 127.0.0.1 like a local Prometheus:
// the stream's open sessions, the schedulers' ticks (signal, task deadlines, deposit verifier),
// bus faults and database faults met by an actor.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositVerifierOf } from '../../src/actors/deposit-verifier.js';
import { schedulerOf } from '../../src/actors/signal-scheduler.js';
import { sample as sampleOf, scrape as scrapeOf, seriesValue } from '../helpers/metrics.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { busEnv, StreamClient } from '../helpers/stream.js';
import { waitFor } from '../helpers/wait.js';

const clock = new TestClock();
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ ...busEnv(), SIGNAL_INTERVAL_S: '30' }, { clock });
});
afterAll(async () => {
  await s.close();
});

const scrape = (): Promise<string> => scrapeOf(s);
const sample = seriesValue;
// A labelled counter appears only after its first increment.
const ticks = (text: string, scheduler: string) => sampleOf(text, `commons_scheduler_ticks_total{scheduler="${scheduler}"}`) ?? 0;

const until = (pred: () => Promise<boolean>, ms = 5000) => waitFor(pred, ms, 'the metric');

describe('metrics from the running parts', () => {
  it('times each chat group commit and the wait of each event in the fan-out queue', async () => {
    const before = await scrape();
    const commits = sample(before, 'commons_chat_commit_seconds_count');
    const waits = sample(before, 'commons_fanout_wait_seconds_count');
    const c = await StreamClient.open(s.url);
    await c.request('subscribe', { topic: 'chat' });
    expect((await s.call('POST', '/api/v1/chat', { body: { body: 'timed' } })).status).toBe(200);
    await c.next((f) => f.op === 'event' && f.topic === 'chat');
    const after = await scrape();
    expect(sample(after, 'commons_chat_commit_seconds_count')).toBe((commits ?? 0) + 1);
    // Each event published to the stream is observed once, whatever its topic (chat, and the
    // presence or signal events of other tests in this server).
    expect(sample(after, 'commons_fanout_wait_seconds_count')).toBeGreaterThan(waits ?? 0);
    expect(sample(after, 'commons_chat_commit_seconds_sum')).toBeGreaterThan(sample(before, 'commons_chat_commit_seconds_sum') ?? 0);
    c.close();
  });

  it('counts open WebSocket sessions up on open and down on close', async () => {
    const base = sample(await scrape(), 'commons_ws_sessions');
    const clients = await Promise.all([StreamClient.open(s.url), StreamClient.open(s.url, { msgpack: true }), StreamClient.open(s.url)]);
    expect(sample(await scrape(), 'commons_ws_sessions')).toBe(base + 3);
    for (const c of clients.slice(0, 2)) c.close();
    await Promise.all(clients.slice(0, 2).map((c) => c.closed));
    await until(async () => sample(await scrape(), 'commons_ws_sessions') === base + 1);
    // A session the server itself ends (a frame over 64 KiB: 1009) is counted down too.
    clients[2]?.ws.send('x'.repeat(70 * 1024));
    expect((await clients[2]?.closed)?.code).toBe(1009);
    await until(async () => sample(await scrape(), 'commons_ws_sessions') === base);
  });

  it('counts a tick of each scheduler: signal, task deadlines, deposit verifier', async () => {
    const before = await scrape();
    expect(ticks(before, 'signal')).toBeGreaterThanOrEqual(1); // the tick at start
    expect(ticks(before, 'task_deadlines')).toBeGreaterThanOrEqual(1); // the pass at boot
    clock.advance(30_000);
    await schedulerOf(s.app).tick();
    await depositVerifierOf(s.app)?.runDue();
    const after = await scrape();
    expect(ticks(after, 'signal')).toBeGreaterThanOrEqual(ticks(before, 'signal') + 1);
    expect(ticks(after, 'deposit_verifier')).toBeGreaterThanOrEqual(ticks(before, 'deposit_verifier') + 1);
    // The task-deadline actor passes every 5 s on its own.
    await until(async () => ticks(await scrape(), 'task_deadlines') > ticks(before, 'task_deadlines'), 8000);
  });

  it('counts a bus fault: a subscriber that throws', async () => {
    const before = sample(await scrape(), 'commons_bus_errors_total');
    const stop = s.app.ctx.bus.subscribe('metrics-test', () => {
      throw new Error('subscriber fault for the test');
    });
    try {
      await s.app.ctx.bus.publish({ topic: 'metrics-test', id: '1', data: null });
    } finally {
      stop();
    }
    expect(sample(await scrape(), 'commons_bus_errors_total')).toBe(before + 1);
  });

  it('counts a database fault met by a scheduler', async () => {
    const before = await scrape();
    await s.app.ctx.sql`ALTER TABLE deposits RENAME TO deposits_away`;
    try {
      await expect(depositVerifierOf(s.app)?.runDue()).rejects.toThrow();
    } finally {
      await s.app.ctx.sql`ALTER TABLE deposits_away RENAME TO deposits`;
    }
    const after = await scrape();
    expect(sample(after, 'commons_db_errors_total')).toBeGreaterThanOrEqual(sample(before, 'commons_db_errors_total') + 1);
    expect(ticks(after, 'deposit_verifier')).toBeGreaterThan(ticks(before, 'deposit_verifier'));
  });
});
