// Two nodes sharing real PostgreSQL and Redis (DESIGN.md "Presence across nodes"):
// online counts agree on every node, and each change is announced once, by the node whose
// atomic update (touch or ZREM) made it, including residents whose node went away.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Residents } from '../../src/actors/residents.js';
import type { BusMessage } from '../../src/domain/ports.js';
import { presenceOf } from '../../src/domain/presence.js';
import { createLogger } from '../../src/log.js';
import { RedisBus } from '../../src/transport/bus/redis.js';
import { SharedStore } from '../helpers/nodes.js';
import { register, TestClock, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const MIN = 60_000;
const real = Boolean(process.env.REDIS_URL && process.env.DATABASE_URL);

describe.runIf(real)('presence across two nodes (real Redis and PostgreSQL)', () => {
  const clock = new TestClock(Date.UTC(2026, 2, 1, 9, 0, 0));
  let shared: SharedStore;
  const nodes: TestServer[] = [];
  const events: { msg: BusMessage }[] = [];
  const residents = (i: number) => presenceOf((nodes[i] as TestServer).app.ctx) as Residents;
  const node = (i: number) => nodes[i] as TestServer;
  const of = (n: string, state: string) =>
    events.filter((e) => {
      const d = e.msg.data as { registration_number: string; state: string };
      return d.registration_number === n && d.state === state;
    });
  const counts = async () => Promise.all([residents(0).onlineCount(), residents(1).onlineCount()]);
  // Every announcement a node made before this reaches the observer before the sentinel the node
  // publishes after it (one publisher connection per node, order kept), so "exactly once" and
  // "nothing announced" are checked after the window for a late one has closed.
  const settle = async () => {
    const ids = nodes.map((n, i) => {
      const id = `sentinel-${i}-${randomBytes(4).toString('hex')}`;
      return { n, id };
    });
    for (const { n, id } of ids) await n.app.ctx.bus.publish({ topic: 'presence', id, data: { sentinel: id } });
    await waitFor(() => ids.every(({ id }) => events.some((e) => e.msg.id === id)), 5000, 'the presence sentinels');
  };

  // One observer on the shared Redis bus sees every announcement once, whichever node made it
  // (each node's own bus also delivers the other node's announcements).
  let observer: RedisBus;

  beforeAll(async () => {
    shared = new SharedStore({}, { clock, redis: true });
    observer = await RedisBus.connect(shared.env.REDIS_URL as string, shared.env.REDIS_PREFIX as string, createLogger('silent'));
    observer.subscribe('presence', (msg) => events.push({ msg }));
    nodes.push(await shared.start(), await shared.start());
  });
  afterAll(async () => {
    await observer.close();
    await shared.close();
  });

  it('a resident moving between nodes is counted on both, online once, offline once', async () => {
    const t0 = clock.now().getTime();
    const a = await register(node(0), 'Roamer');
    await node(0).call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token });
    expect(await counts()).toEqual([1, 1]);
    clock.advance(10 * MIN);
    const again = await node(1).call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token });
    expect(again.json.data.came_online).toBe(false);
    // Node 0's actor expires 30 minutes after the heartbeat it saw; its ZREM fails because node 1
    // refreshed the expiry, so nothing is announced and both still count the resident.
    clock.set(t0 + 30 * MIN);
    await Promise.all([residents(0).tick(), residents(1).tick()]);
    await settle();
    expect(await counts()).toEqual([1, 1]);
    expect(of(a.registration_number, 'offline')).toEqual([]);
    clock.set(t0 + 40 * MIN);
    await Promise.all([residents(0).tick(), residents(1).tick(), residents(0).tick(), residents(1).tick()]);
    await settle();
    expect(await counts()).toEqual([0, 0]);
    expect(of(a.registration_number, 'online')).toHaveLength(1);
    expect(of(a.registration_number, 'offline')).toHaveLength(1);
    const habitat = await node(1).call('GET', '/api/v1/habitat');
    expect(habitat.json.data.residents_online).toBe(0);
  });

  it('many residents on both nodes: counts agree and every change is announced exactly once', async () => {
    const t0 = clock.now().getTime();
    const who = await Promise.all(Array.from({ length: 12 }, (_, i) => register(node(i % 2), `Crowd ${i}`)));
    // Each resident heartbeats on both nodes at once: only one touch creates the entry.
    await Promise.all(
      who.flatMap((w) => [
        node(0).call('POST', '/api/v1/habitat/heartbeat', { token: w.api_token }),
        node(1).call('POST', '/api/v1/habitat/heartbeat', { token: w.api_token }),
      ]),
    );
    expect(await counts()).toEqual([12, 12]);
    const [c0, c1] = await Promise.all([node(0).call('GET', '/api/v1/habitat'), node(1).call('GET', '/api/v1/habitat')]);
    expect(c0.json.data.residents_online).toBe(12);
    expect(c1.json.data.residents_online).toBe(12);
    clock.set(t0 + 30 * MIN);
    await Promise.all([residents(0).tick(), residents(1).tick(), residents(0).tick(), residents(1).tick()]);
    await settle();
    expect(await counts()).toEqual([0, 0]);
    for (const w of who) {
      expect(of(w.registration_number, 'online'), w.registration_number).toHaveLength(1);
      expect(of(w.registration_number, 'offline'), w.registration_number).toHaveLength(1);
    }
  });

  it('a resident whose node went away is swept and announced once by a surviving node', async () => {
    const t0 = clock.now().getTime();
    const b = await register(node(1), 'Orphan');
    await node(1).call('POST', '/api/v1/habitat/heartbeat', { token: b.api_token });
    await shared.stop(node(1));
    nodes.splice(1, 1);
    expect(await residents(0).onlineCount()).toBe(1);
    clock.set(t0 + 30 * MIN);
    await residents(0).tick();
    await residents(0).tick();
    await settle();
    expect(await residents(0).onlineCount()).toBe(0);
    const off = of(b.registration_number, 'offline');
    // Node 1 is gone, so the one announcement is node 0's sweep.
    expect(off).toHaveLength(1);
  });
});
