// A push retry outlives its node (DECISIONS.md "Reliability promises"): the first try of a
// delivery fails, the node goes away before the next, and a node started on the same database
// makes the remaining try from the outbox: the callback gets the emission (same webhook-id), the
// row is gone, and the restart does not emit the slot again. And the emission and its outbox rows
// are one transaction: a failure between them leaves neither. Both backends.
import { afterAll, expect, it } from 'vitest';
import { schedulerOf } from '../../src/actors/signal-scheduler.js';
import { countRows } from '../helpers/db.js';
import { SharedStore } from '../helpers/nodes.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { emitNext } from '../helpers/signal.js';
import { waitFor } from '../helpers/wait.js';

let receiver: Receiver | undefined;
let shared: SharedStore | undefined;
afterAll(async () => {
  await shared?.close();
  await receiver?.close();
});

it('a delivery whose node went away between tries is completed by the next node, once', async () => {
  const clock = new TestClock();
  // A 60 s interval: retries start 1 s apart (actors/signal-scheduler.ts timings).
  const env = { SIGNAL_INTERVAL_S: '60' };
  // The callback fails for as long as the first node runs, and answers once it is gone.
  let firstGone = false;
  receiver = await startReceiver(() => (firstGone ? 200 : 500));
  shared = new SharedStore(env, { clock });
  const first = await shared.start();
  // The tick each node runs at start may still be emitting: let it finish before subscribing, so
  // only the emission below is for the subscription (tick() shares a tick in flight).
  await schedulerOf(first.app).tick();
  const owner = await register(first, 'Outbox subscriber');
  const sub = await first.call('POST', '/api/v1/relay/subscriptions', {
    token: owner.api_token,
    body: { callback_url: receiver.url, secret: 'a secret of sixteen or more' },
  });
  expect(sub.status, sub.text).toBe(200);
  const entry = await emitNext(first, clock);
  await waitFor(() => (receiver as Receiver).requests.length >= 1, 10_000, 'the first try');
  const row = async (s: TestServer) =>
    (await s.app.ctx.sql<{ attempts: number }[]>`SELECT attempts FROM push_outbox WHERE emission_id = ${entry.id}`)[0];
  await waitFor(async () => ((await row(first))?.attempts ?? 0) >= 1, 10_000, 'the failed try recorded');
  const emissions = async (s: TestServer) => (await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM signal_emissions`)[0]?.n;
  const emitted = await emissions(first);
  await shared.stop(first);
  const triedByFirst = receiver.requests.length;
  firstGone = true;

  const last = await shared.start();
  await waitFor(() => (receiver as Receiver).requests.length > triedByFirst, 15_000, 'the retry from the outbox');
  await waitFor(async () => (await row(last)) === undefined, 10_000, 'the row removed');
  // Every try carried the same emission, and the next node's try succeeded (the row is gone and
  // the subscription's last status is 200, below).
  expect(new Set(receiver.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([entry.id]));
  const [s] = await last.app.ctx.sql<{ last_status: string }[]>`SELECT last_status FROM push_subscriptions`;
  expect(s?.last_status).toBe('200');
  // The restart did not emit the slot again.
  expect(await emissions(last)).toBe(emitted);
}, 60_000);

it('a failure between the emission and its outbox rows leaves neither (one transaction)', async () => {
  const clock = new TestClock();
  const rx = await startReceiver(() => 200);
  const s = await startTestServer({ SIGNAL_INTERVAL_S: '60' }, { clock });
  try {
    await schedulerOf(s.app).tick();
    const owner = await register(s, 'Atomic subscriber');
    const sub = await s.call('POST', '/api/v1/relay/subscriptions', {
      token: owner.api_token,
      body: { callback_url: rx.url, secret: 'a secret of sixteen or more' },
    });
    expect(sub.status, sub.text).toBe(200);
    const emitted = await countRows(s, 'signal_emissions');
    const events = await countRows(s, 'nostr_events');
    const queued = await countRows(s, 'push_outbox');
    // The fault between the two writes: the outbox insert fails. SQL is the only way to plant it
    // (no API makes a database write fail on purpose); the trigger lives in this test's database.
    await s.app.ctx.sql.unsafe(`
      CREATE FUNCTION fail_outbox() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'planted outbox fault'; END $$;
      CREATE TRIGGER fail_outbox BEFORE INSERT ON push_outbox FOR EACH ROW EXECUTE FUNCTION fail_outbox();`);
    clock.advance(s.config.signalIntervalS * 1000);
    await expect(schedulerOf(s.app).tick()).rejects.toThrow(/planted outbox fault/);
    expect(await countRows(s, 'signal_emissions')).toBe(emitted);
    expect(await countRows(s, 'push_outbox')).toBe(queued);
    expect(await countRows(s, 'nostr_events')).toBe(events);

    // The fault gone, the next tick emits the slot and delivers it.
    await s.app.ctx.sql.unsafe('DROP TRIGGER fail_outbox ON push_outbox');
    const entry = await emitNext(s, clock);
    expect(await countRows(s, 'signal_emissions')).toBe(emitted + 1);
    await waitFor(() => rx.requests.some((r) => r.headers['webhook-id'] === entry.id), 10_000, 'the delivery');
  } finally {
    await s.close();
    await rx.close();
  }
}, 60_000);
