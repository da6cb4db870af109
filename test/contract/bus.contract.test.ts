// The bus contract over every implementation (STYLE.md 6): the in-process bus always, the Redis
// bus when REDIS_URL is set (CI sets it), plus what only Redis does: crossing nodes once.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { Bus, BusMessage } from '../../src/domain/ports.js';
import { createLogger } from '../../src/log.js';
import { LocalBus } from '../../src/transport/bus/local.js';
import { RedisBus } from '../../src/transport/bus/redis.js';
import { waitFor } from '../helpers/wait.js';

const REDIS_URL = process.env.REDIS_URL;
if (!REDIS_URL) console.log('bus contract: REDIS_URL is unset, so the Redis bus suites do not run here (CI sets it)');

const log = createLogger('silent');
const prefix = () => `t${randomBytes(5).toString('hex')}:`;
const opened: Bus[] = [];
afterEach(async () => {
  for (const b of opened.splice(0)) await b.close();
});

type Make = (prefix: string, onError?: (err: unknown) => void) => Promise<Bus>;
const impls: { name: string; make: Make; available: boolean }[] = [
  { name: 'LocalBus', available: true, make: async (_p, onError) => new LocalBus(onError) },
  { name: 'RedisBus', available: Boolean(REDIS_URL), make: (p) => RedisBus.connect(REDIS_URL as string, p, log) },
];

// A late duplicate or a stray message would arrive before a sentinel published after it on the
// same connection (Redis and the local bus both keep publication order), so waiting for the
// sentinel makes "once" and "never" checks deterministic instead of timed.
const sentinel = async (bus: Bus, topic: string, ...seen: BusMessage[][]): Promise<void> => {
  const id = `sentinel-${randomBytes(4).toString('hex')}`;
  await bus.publish({ topic, id, data: null });
  for (const got of seen) {
    await waitFor(() => got.some((m) => m.id === id), 5000, `sentinel ${id} on ${topic}`);
    got.splice(0, got.length, ...got.filter((m) => m.id !== id));
  }
};
const collect = (bus: Bus, topic: string) => {
  const got: BusMessage[] = [];
  bus.subscribe(topic, (m) => got.push(m));
  return got;
};

for (const impl of impls) {
  describe.runIf(impl.available)(`${impl.name} contract`, () => {
    const open = async (p = prefix()) => {
      const b = await impl.make(p);
      opened.push(b);
      return b;
    };

    it('delivers a message to every subscriber of its topic, once, and to no other topic', async () => {
      const bus = await open();
      const a = collect(bus, 'chat');
      const b = collect(bus, 'chat');
      const other = collect(bus, 'posts');
      await bus.publish({ topic: 'chat', id: '1', data: { body: 'hi', n: [1, 2] } });
      await sentinel(bus, 'chat', a, b);
      await sentinel(bus, 'posts', other);
      expect(a).toEqual([{ topic: 'chat', id: '1', data: { body: 'hi', n: [1, 2] } }]);
      expect(b).toEqual(a);
      expect(other).toEqual([]);
    });

    it('keeps publication order', async () => {
      const bus = await open();
      const got = collect(bus, 'signal');
      for (let i = 1; i <= 200; i++) await bus.publish({ topic: 'signal', id: String(i), data: i });
      await waitFor(() => got.length === 200);
      expect(got.map((m) => m.data)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    });

    it('stops delivering after unsubscribe and after close', async () => {
      const bus = await open();
      const got: BusMessage[] = [];
      const off = bus.subscribe('replies', (m) => got.push(m));
      await bus.publish({ topic: 'replies', id: '1', data: null });
      off();
      // A probe subscribed on the same bus hears '2' and a sentinel after it: the unsubscribed
      // handler would have been called in the same deliveries.
      const probe = collect(bus, 'replies');
      await bus.publish({ topic: 'replies', id: '2', data: null });
      await sentinel(bus, 'replies', probe);
      expect(probe.map((m) => m.id)).toEqual(['2']);
      expect(got.map((m) => m.id)).toEqual(['1']);
      bus.subscribe('replies', (m) => got.push(m));
      await bus.close();
      await bus.publish({ topic: 'replies', id: '3', data: null });
      expect(got.map((m) => m.id)).toEqual(['1']);
    });

    it('keeps delivering to the others when one subscriber throws', async () => {
      const errors: unknown[] = [];
      const bus = impl.name === 'LocalBus' ? await impl.make('', (e) => errors.push(e)) : await open();
      if (impl.name === 'LocalBus') opened.push(bus);
      bus.subscribe('treasury', () => {
        throw new Error('boom');
      });
      const got = collect(bus, 'treasury');
      await bus.publish({ topic: 'treasury', id: '1', data: 1 });
      await sentinel(bus, 'treasury', got);
      expect(got.map((m) => m.id)).toEqual(['1']);
      if (impl.name === 'LocalBus') expect(errors.length).toBe(2);
    });

    it('has a node id of its own', async () => {
      const [a, b] = [await open(), await open()];
      expect(a.nodeId).not.toBe(b.nodeId);
    });
  });
}

describe.runIf(Boolean(REDIS_URL))('RedisBus across nodes', () => {
  const open = async (p: string) => {
    const b = await RedisBus.connect(REDIS_URL as string, p, log);
    opened.push(b);
    return b;
  };

  it('carries a message to another node once, and the publisher hears its own message once (echo dropped)', async () => {
    const p = prefix();
    const [a, b] = [await open(p), await open(p)];
    const onA = collect(a, 'chat');
    const onB = collect(b, 'chat');
    await a.publish({ topic: 'chat', id: '7', data: { x: 1 } });
    await waitFor(() => onB.length === 1);
    // An echo of '7' to A would come on A's subscriber connection before anything B publishes
    // after receiving '7', and a second '7' to B before anything A publishes after it.
    await sentinel(b, 'chat', onA);
    await sentinel(a, 'chat', onB);
    const real = (m: BusMessage) => !m.id.startsWith('sentinel-');
    onA.splice(0, onA.length, ...onA.filter(real));
    onB.splice(0, onB.length, ...onB.filter(real));
    expect(onA).toEqual([{ topic: 'chat', id: '7', data: { x: 1 } }]);
    expect(onB).toEqual(onA);
  });

  it('never crosses between prefixes', async () => {
    const pb = prefix();
    const [a, b, c] = [await open(prefix()), await open(pb), await open(pb)];
    const onB = collect(b, 'chat');
    await a.publish({ topic: 'chat', id: '1', data: null });
    // A's message, had it crossed, would reach B's connection before a sentinel that another
    // node of B's prefix publishes afterwards (Redis handles one command at a time).
    await sentinel(c, 'chat', onB);
    expect(onB).toEqual([]);
  });
});
