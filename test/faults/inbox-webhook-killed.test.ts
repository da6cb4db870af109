// A node killed with SIGKILL while an inbox delivery is in flight (DECISIONS.md "Reliability
// promises": no inbox delivery is lost): the receiver holds the POST open, the node dies, and a
// node started on the same database delivers that item again (same webhook-id, at least once)
// and every item after it, in id order. Real PostgreSQL (the node is a separate process).
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { call } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { type Node, startNode } from './servers.js';

const DATABASE_URL = process.env.DATABASE_URL;
const schema = `tk_${randomBytes(5).toString('hex')}`;
const env = () => ({
  DATABASE_URL: DATABASE_URL as string,
  DATABASE_SCHEMA: schema,
  DATA_DIR: mkdtempSync(join(tmpdir(), 'commons-inbox-killed-')),
  ALLOW_PRIVATE_CALLBACKS: '1',
  INBOX_WEBHOOK_BACKOFF_MS: '100',
  INBOX_WEBHOOK_TIMEOUT_MS: '1000',
});
let receiver: Receiver | undefined;
const nodes: Node[] = [];
afterAll(async () => {
  for (const n of nodes) n.kill();
  await Promise.all(nodes.map((n) => n.exited));
  await receiver?.close();
  if (DATABASE_URL) {
    const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await sql.end();
  }
});

it.runIf(Boolean(DATABASE_URL))(
  'an item in flight when its node is killed is delivered by the next node, then the rest, in order',
  async () => {
    let killed = false;
    const accepted: string[] = [];
    receiver = await startReceiver((_n, req) => {
      if (!killed) return 'hang';
      accepted.push(String(req.headers['webhook-id']));
      return 200;
    });
    const first = await startNode(env(), 'first');
    nodes.push(first);
    const reg = async (name: string) =>
      (await call(first.url, 'POST', '/api/v1/ai/register', { body: { name, accepted_principles: true } })).json.data;
    const sender = await reg('Sender');
    const owner = await reg('Owner');
    const put = await call(first.url, 'PUT', '/api/v1/inbox/webhook', {
      token: owner.api_token,
      body: { callback_url: receiver.url, secret: 'a secret of sixteen or more' },
    });
    expect(put.status, put.text).toBe(200);
    for (let i = 1; i <= 3; i++) {
      const r = await call(first.url, 'POST', `/api/v1/dm/${owner.registration_number}`, {
        token: sender.api_token,
        body: { body: `m${i}` },
      });
      expect(r.status).toBe(200);
    }
    await waitFor(() => (receiver as Receiver).requests.length >= 1, 15_000, 'the first POST in flight');
    first.kill('SIGKILL');
    await first.exited;
    killed = true;

    const second = await startNode(env(), 'second');
    nodes.push(second);
    await waitFor(() => accepted.length >= 3, 30_000, 'every item from the outbox');
    expect(accepted).toEqual([1, 2, 3].map((i) => `inbox-${owner.registration_number}-${i}`));
    // The POST that was in flight carried item 1: the redelivery has the same webhook-id.
    expect(receiver.requests[0]?.headers['webhook-id']).toBe(`inbox-${owner.registration_number}-1`);
  },
  120_000,
);
