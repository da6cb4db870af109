// The inbox across two nodes sharing one PostgreSQL schema and one Redis prefix (DECISIONS.md
// "Inbox"): an item caused on node A reaches a stream session on node B once, in id order, and
// items caused on both nodes at once reach it with no gap and no duplicate.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream.js';
import { waitFor } from '../helpers/wait.js';

const enabled = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
if (!enabled) console.log('inbox two-node test: DATABASE_URL and REDIS_URL are both needed; it does not run here (CI sets them)');

describe.runIf(enabled)('inbox on two nodes', () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    const env = { REDIS_URL: process.env.REDIS_URL as string, REDIS_PREFIX: `t2i${randomBytes(5).toString('hex')}:` };
    a = await startTestServer(env);
    b = await startTestServer(env, { schema: a.config.databaseSchema as string });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('an item caused on node A reaches a session on node B; concurrent causes on both arrive in id order, once', async () => {
    const alice = await register(a, 'Alice');
    const bob = await register(a, 'Bob');
    const carol = await register(b, 'Carol');
    const c = await StreamClient.open(b.url, { token: bob.api_token });
    try {
      expect((await c.request('subscribe', { topic: 'inbox' })).op).toBe('ack');
      const first = await a.call('POST', `/api/v1/dm/${bob.registration_number}`, {
        token: alice.api_token,
        body: { body: 'from node A' },
      });
      expect(first.status).toBe(200);
      const e = await c.next((f) => f.op === 'event' && f.topic === 'inbox');
      expect(e.data).toMatchObject({ id: '1', kind: 'dm', actor: alice.registration_number, excerpt: 'from node A' });
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => {
          const [node, from] = i % 2 === 0 ? [a, alice] : [b, carol];
          return node.call('POST', `/api/v1/dm/${bob.registration_number}`, { token: from.api_token, body: { body: `m${i}` } });
        }),
      );
      await waitFor(() => c.events('inbox').length >= 20, 10_000, '20 more items');
      expect(c.events('inbox').map((f) => f.id)).toEqual(Array.from({ length: 20 }, (_, i) => String(i + 2)));
    } finally {
      c.close();
    }
  });
});
