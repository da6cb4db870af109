// Inbox webhook deliveries outlive their node (DECISIONS.md "Inbox", "Reliability promises"): the
// receiver fails while the first node runs, the node goes away mid-retry, and a node started on
// the same database delivers every queued item from the outbox, once each (as accepted by the
// receiver), in id order. Both backends.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { templateDir } from '../helpers/global-setup.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { register, startTestServer, type TestServer, usingRealPostgres } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const dataDir = mkdtempSync(join(tmpdir(), 'commons-inbox-outbox-'));
const schema = `t_${randomBytes(6).toString('hex')}`;
let receiver: Receiver | undefined;
let last: TestServer | undefined;
afterAll(async () => {
  if (last && usingRealPostgres()) await last.app.ctx.sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await last?.close();
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

it('items queued for a failing receiver are delivered by the next node, once each, in order', async () => {
  if (!usingRealPostgres()) cpSync(templateDir(), dataDir, { recursive: true });
  const env = { INBOX_WEBHOOK_BACKOFF_MS: '200', INBOX_WEBHOOK_BACKOFF_MAX_MS: '400', INBOX_WEBHOOK_TIMEOUT_MS: '1000' };
  let firstGone = false;
  const accepted: string[] = [];
  receiver = await startReceiver((_n, req) => {
    if (!firstGone) return 500;
    accepted.push(String(req.headers['webhook-id']));
    return 200;
  });
  const first = await startTestServer(env, { dataDir, schema });
  const sender = await register(first, 'Sender');
  const owner = await register(first, 'Owner');
  const put = await first.call('PUT', '/api/v1/inbox/webhook', {
    token: owner.api_token,
    body: { callback_url: receiver.url, secret: 'a secret of sixteen or more' },
  });
  expect(put.status, put.text).toBe(200);
  for (let i = 1; i <= 5; i++) {
    const r = await first.call('POST', `/api/v1/dm/${owner.registration_number}`, { token: sender.api_token, body: { body: `m${i}` } });
    expect(r.status).toBe(200);
  }
  await waitFor(() => (receiver as Receiver).requests.length >= 2, 10_000, 'failed tries on the first node');
  await first.close();
  firstGone = true;

  last = await startTestServer(env, { dataDir, schema });
  await waitFor(() => accepted.length >= 5, 20_000, 'every item from the outbox');
  await waitFor(
    async () => (await (last as TestServer).app.ctx.sql`SELECT 1 FROM inbox_outbox`).length === 0,
    10_000,
    'the outbox drained',
  );
  expect(accepted).toEqual([1, 2, 3, 4, 5].map((i) => `inbox-${owner.registration_number}-${i}`));
}, 60_000);
