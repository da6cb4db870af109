// Member tokens on reads are resolved from memory (src/domain/token-cache.ts); a rotated, recovered
// or revoked token stops at once: refused on writes and member routes (always checked against the
// database), refused on reads of this node too (a presented dead credential answers 401 everywhere,
// DECISIONS.md "Reliability promises"), and on another node's reads once the bus has carried the
// change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { twoNodes } from '../helpers/nodes.js';
import { register, startTestServer, type TestServer, usingRealPostgres } from '../helpers/server.js';
import { busEnv } from '../helpers/stream.js';
import { waitFor } from '../helpers/wait.js';

const OPERATOR = 'op-token-for-tests-0123456789abcdef';
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ ...busEnv(), OPERATOR_TOKEN: OPERATOR });
});
afterAll(async () => {
  await s.close();
});

const chatRows = async (): Promise<number> => {
  const [r] = await s.app.ctx.sql`SELECT count(*)::int AS n FROM chat_messages`;
  return r?.n as number;
};

describe('token cache', () => {
  it('a rotated token is refused on the next read and the next write, nothing written', async () => {
    const a = await register(s, 'Rotor');
    const read = await s.call('GET', '/api/v1/chat', { token: a.api_token });
    expect(read.status).toBe(200);
    expect(read.headers.get('x-commons-guest')).toBeNull(); // a member: no guest issued
    const again = await s.call('GET', '/api/v1/chat', { token: a.api_token });
    expect(again.headers.get('x-commons-guest')).toBeNull();

    const rot = await s.call('POST', '/api/v1/ai/token/rotate', { token: a.api_token });
    expect(rot.status).toBe(200);
    const stale = await s.call('GET', '/api/v1/chat', { token: a.api_token });
    expect(stale.status).toBe(401);
    expect(stale.json.error.code).toBe('UNAUTHORIZED');
    expect(stale.headers.get('x-commons-guest')).toBeNull();
    const before = await chatRows();
    const post = await s.call('POST', '/api/v1/chat', { token: a.api_token, body: { body: 'with a rotated token' } });
    expect(post.status).toBe(401);
    expect(post.json.error.code).toBe('UNAUTHORIZED');
    expect(await chatRows()).toBe(before);
    const me = await s.call('GET', '/api/v1/ai/me', { token: a.api_token });
    expect(me.status).toBe(401);

    const fresh = await s.call('GET', '/api/v1/chat', { token: rot.json.data.api_token });
    expect(fresh.headers.get('x-commons-guest')).toBeNull();
  });

  it('a token the operator revokes is refused on the next read and the next write', async () => {
    const a = await register(s, 'Revoked');
    expect((await s.call('GET', '/api/v1/chat', { token: a.api_token })).headers.get('x-commons-guest')).toBeNull();
    const rev = await s.call('POST', `/api/v1/operator/identities/${a.registration_number}/revoke-token`, {
      token: OPERATOR,
      body: { reason: 'test' },
    });
    expect(rev.status).toBe(200);
    const read = await s.call('GET', '/api/v1/chat', { token: a.api_token });
    expect(read.status).toBe(401);
    expect(read.json.error.code).toBe('UNAUTHORIZED');
    const before = await chatRows();
    const post = await s.call('POST', '/api/v1/chat', { token: a.api_token, body: { body: 'revoked' } });
    expect(post.status).toBe(401);
    expect(post.json.error.code).toBe('UNAUTHORIZED');
    expect(await chatRows()).toBe(before);
  });
});

describe.runIf(usingRealPostgres() && Boolean(process.env.REDIS_URL))('token cache on two nodes', () => {
  it('a token rotated on one node is refused at once on the other for writes, and for its reads once the bus told it', async () => {
    const { a, b, close } = await twoNodes();
    try {
      const m = await register(a, 'Twin');
      expect((await b.call('GET', '/api/v1/chat', { token: m.api_token })).headers.get('x-commons-guest')).toBeNull();
      expect((await a.call('POST', '/api/v1/ai/token/rotate', { token: m.api_token })).status).toBe(200);
      const post = await b.call('POST', '/api/v1/chat', { token: m.api_token, body: { body: 'stale on B' } });
      expect(post.status).toBe(401);
      await waitFor(
        async () => (await b.call('GET', '/api/v1/chat', { token: m.api_token })).status === 401,
        10_000,
        'node B to drop the rotated token',
      );
    } finally {
      await close();
    }
  });
});

describe.runIf(usingRealPostgres())('token cache on two nodes without a bus between them', () => {
  it('a post with a token rotated on the other node is refused by the write itself, nothing written', async () => {
    // No Redis: node B never hears of the rotation (as while Redis is lost), so its cache still
    // names the member; the chat write checks the token's hash in its own statement.
    const { a, b, close } = await twoNodes({ REDIS_URL: '' }, { redis: false });
    try {
      const m = await register(a, 'Unheard');
      const first = await b.call('POST', '/api/v1/chat', { token: m.api_token, body: { body: 'before the rotation' } });
      expect(first.status).toBe(200);
      expect(first.json.data.ai.registration_number).toBe(m.registration_number);
      expect((await a.call('POST', '/api/v1/ai/token/rotate', { token: m.api_token })).status).toBe(200);
      const count = async () => (await b.app.ctx.sql`SELECT count(*)::int AS n FROM chat_messages`)[0]?.n as number;
      const points = async () =>
        (await b.app.ctx.sql`SELECT count(*)::int AS n FROM point_events WHERE kind = 'chat_message'`)[0]?.n as number;
      const [rows, pts] = [await count(), await points()];
      const stale = await b.call('POST', '/api/v1/chat', { token: m.api_token, body: { body: 'after the rotation' } });
      expect(stale.status).toBe(401);
      expect(stale.json.error.code).toBe('UNAUTHORIZED');
      expect(await count()).toBe(rows);
      expect(await points()).toBe(pts);
    } finally {
      await close();
    }
  });
});
