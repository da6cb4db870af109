// A push retry outlives its node (DECISIONS.md "Reliability promises"): the first try of a
// delivery fails, the node goes away before the next, and a node started on the same database
// makes the remaining try from the outbox: the callback gets the emission (same webhook-id), the
// row is gone, and the restart does not emit the slot again. Both backends.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { templateDir } from '../helpers/global-setup.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { register, startTestServer, TestClock, type TestServer, usingRealPostgres } from '../helpers/server.js';
import { emitNext } from '../helpers/signal.js';
import { waitFor } from '../helpers/wait.js';

const dataDir = mkdtempSync(join(tmpdir(), 'commons-outbox-'));
const schema = `t_${randomBytes(6).toString('hex')}`;
let receiver: Receiver | undefined;
let last: TestServer | undefined;
afterAll(async () => {
  if (last && usingRealPostgres()) await last.app.ctx.sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await last?.close();
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

it('a delivery whose node went away between tries is completed by the next node, once', async () => {
  if (!usingRealPostgres()) cpSync(templateDir(), dataDir, { recursive: true });
  const clock = new TestClock();
  // A 60 s interval: retries start 1 s apart (actors/signal-scheduler.ts timings).
  const env = { SIGNAL_INTERVAL_S: '60' };
  // The callback fails for as long as the first node runs, and answers once it is gone.
  let firstGone = false;
  receiver = await startReceiver(() => (firstGone ? 200 : 500));
  const first = await startTestServer(env, { clock, dataDir, schema });
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
  await first.close();
  const triedByFirst = receiver.requests.length;
  firstGone = true;

  last = await startTestServer(env, { clock, dataDir, schema });
  await waitFor(() => (receiver as Receiver).requests.length > triedByFirst, 15_000, 'the retry from the outbox');
  await waitFor(async () => (await row(last as TestServer)) === undefined, 10_000, 'the row removed');
  // Every try carried the same emission, and the next node's try succeeded (the row is gone and
  // the subscription's last status is 200, below).
  expect(new Set(receiver.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([entry.id]));
  const [s] = await last.app.ctx.sql<{ last_status: string }[]>`SELECT last_status FROM push_subscriptions`;
  expect(s?.last_status).toBe('200');
  // The restart did not emit the slot again.
  expect(await emissions(last)).toBe(emitted);
}, 60_000);
