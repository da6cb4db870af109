// Member tokens on reads are resolved from memory (src/domain/token-cache.ts); a rotated, recovered
// or revoked token stops at once: refused on writes and member routes (always checked against the
// database), refused on reads of this node too (a presented dead credential answers 401 everywhere,
// DECISIONS.md "Reliability promises"), and on another node's reads once the bus has carried the
// change.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { memberForRead, memberForReadNow, TOKEN_CACHE_MS, tokensChanged } from '../../src/domain/token-cache.js';
import { hashToken } from '../../src/domain/tokens.js';
import { chatIndexed } from '../helpers/chat-index.js';
import { twoNodes } from '../helpers/nodes.js';
import { OPERATOR_TOKEN as OPERATOR } from '../helpers/operator.js';
import { register, startTestServer, type TestServer, usingRealPostgres } from '../helpers/server.js';
import { watchStatements } from '../helpers/statements.js';
import { busEnv } from '../helpers/stream.js';
import { waitFor } from '../helpers/wait.js';

/** A token as the cache takes it (the request's credential digests it once). */
const digestOf = (token: string) => {
  const hash = hashToken(token);
  return { digest: hash.toString('base64'), hash };
};

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

describe('token cache under steady reads', () => {
  // The database's token lookups (test/helpers/statements.ts); with `failing`, each is refused as
  // the database would refuse it while down.
  const lookups = (failing = false) => watchStatements(s.app.ctx.sql, 'token_hash = $1', { failing });
  // The cache's ages are Date.now() (src/domain/token-cache.ts): here the clock stands still and
  // the test moves it, so an entry is exactly as old as the test says however slow the machine
  // (timers stay real). A background lookup starts inside the read that finds the entry old, so
  // once that read is answered its lookup has been sent: the answers are the barrier.
  let t0 = 0;
  const at = (ms: number) => vi.setSystemTime(t0 + ms);
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    t0 = Date.now();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a token read past half its life is looked up again in the background and never falls out of memory', async () => {
    const m = await register(s, 'Steady');
    expect((await s.call('GET', '/api/v1/chat', { token: m.api_token })).status).toBe(200); // fills the cache at t0
    const seen = lookups();
    try {
      const lean = async () => {
        const n = s.app.fastRead.answered;
        const r = await s.call('GET', '/api/v1/chat', { token: m.api_token });
        expect(r.status).toBe(200);
        expect(r.headers.get('x-commons-guest')).toBeNull();
        return s.app.fastRead.answered === n + 1;
      };
      expect(await lean()).toBe(true);
      at(TOKEN_CACHE_MS / 2 - 1);
      expect(await lean()).toBe(true);
      expect(seen.count()).toBe(0);
      at(TOKEN_CACHE_MS / 2);
      // At half its life: still answered from memory, and one lookup started for it, not one per read.
      expect(await lean()).toBe(true);
      expect(await lean()).toBe(true);
      expect(seen.count()).toBe(1);
      // Its answer stored (the entry is replaced in the same turn the answer comes back).
      await waitFor(() => seen.answered() === 1, 5_000, 'the background lookup');
      at(TOKEN_CACHE_MS);
      // At the first entry's whole life: the refreshed entry answers, from memory; it is half its
      // own life old, so one more lookup starts, not one per read.
      for (let i = 0; i < 10; i++) expect(await lean()).toBe(true);
      expect(seen.count()).toBe(2);
    } finally {
      seen.restore();
    }
  });

  it('a background lookup that fails is not tried again by every read: the entry runs out its life', async () => {
    const m = await register(s, 'Outage');
    expect((await s.call('GET', '/api/v1/chat', { token: m.api_token })).status).toBe(200);
    const seen = lookups(true);
    try {
      at(TOKEN_CACHE_MS / 2);
      const read = async () => {
        const n = s.app.fastRead.answered;
        expect((await s.call('GET', '/api/v1/chat', { token: m.api_token })).status).toBe(200);
        expect(s.app.fastRead.answered).toBe(n + 1); // still answered from memory
      };
      await read();
      expect(seen.count()).toBe(1);
      // The failure has come back (a refused statement fails at once), and the reads after it,
      // however many, do not try again: the entry runs out its life.
      for (let i = 0; i < 10; i++) await read();
      at(TOKEN_CACHE_MS - 1);
      for (let i = 0; i < 10; i++) await read();
      expect(seen.count()).toBe(1);
    } finally {
      seen.restore();
    }
  });

  it('a lookup in flight when the tokens change does not store what it read', async () => {
    const m = await register(s, 'Midflight');
    const ctx = s.app.ctx;
    const reading = memberForRead(ctx, digestOf(m.api_token)); // reads the row, still valid
    await tokensChanged(ctx); // as a rotation elsewhere would, before that answer came back
    expect((await reading)?.name).toBe('Midflight');
    expect(memberForReadNow(ctx, digestOf(m.api_token))).toBeUndefined();
    await memberForRead(ctx, digestOf(m.api_token)); // a lookup begun after the change is kept
    expect(memberForReadNow(ctx, digestOf(m.api_token))?.name).toBe('Midflight');
  });

  it('reads of an expired token together wait for one lookup', async () => {
    const m = await register(s, 'Herd');
    expect((await s.call('GET', '/api/v1/chat', { token: m.api_token })).status).toBe(200);
    at(TOKEN_CACHE_MS); // expired: an entry is fresh for less than its life
    const seen = lookups();
    try {
      const all = await Promise.all(Array.from({ length: 12 }, () => s.call('GET', '/api/v1/chat', { token: m.api_token })));
      expect(all.map((r) => r.status)).toEqual(Array(12).fill(200));
      expect(all.every((r) => r.headers.get('x-commons-guest') === null)).toBe(true);
      expect(seen.count()).toBe(1);
    } finally {
      seen.restore();
    }
  });
});

describe('task writes take their member from the cache and check the token in their transaction', () => {
  // The cache's ages stand still (as above), so the entry is fresh whatever the machine's speed:
  // what refuses the write is its own transaction, not a lookup.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a task post and a claim with a token changed under the node are refused (401), nothing written', async () => {
    const poster = await register(s, 'Cached Poster');
    const solver = await register(s, 'Cached Solver');
    const posted = await s.call('POST', '/api/v1/habitat/tasks', {
      token: poster.api_token,
      body: { title: 'cached', body: 'posted with a cached token', reward_points: 3 },
    });
    expect(posted.status).toBe(200);
    // Both members' tokens in this node's cache (a write resolves its member there).
    expect(memberForReadNow(s.app.ctx, digestOf(poster.api_token))?.name).toBe('Cached Poster');
    expect((await s.call('GET', '/api/v1/chat', { token: solver.api_token })).status).toBe(200);
    expect(memberForReadNow(s.app.ctx, digestOf(solver.api_token))?.name).toBe('Cached Solver');
    // Changed in the database only, as a rotation on a node whose bus message has not come.
    for (const m of [poster, solver]) {
      await s.app.ctx.sql`UPDATE identities SET token_hash = ${hashToken(`${m.api_token}-rotated`)}
        WHERE token_hash = ${hashToken(m.api_token)}`;
    }
    const count = async () => (await s.app.ctx.sql`SELECT count(*)::int AS n FROM tasks`)[0]?.n as number;
    const before = await count();
    const again = await s.call('POST', '/api/v1/habitat/tasks', {
      token: poster.api_token,
      body: { title: 'stale', body: 'posted with a token rotated away', reward_points: 3 },
    });
    expect(again.status).toBe(401);
    expect(again.json.error.code).toBe('UNAUTHORIZED');
    expect(await count()).toBe(before);
    const claim = await s.call('POST', `/api/v1/habitat/tasks/${posted.json.data.id}/claim`, { token: solver.api_token });
    expect(claim.status).toBe(401);
    expect(claim.json.error.code).toBe('UNAUTHORIZED');
    const [task] = await s.app.ctx.sql`SELECT state, version FROM tasks WHERE id = ${posted.json.data.id}`;
    expect(task).toEqual({ state: 'open', version: 0 });
    // Still cached: the writes were refused by their transactions, not by a lookup.
    expect(memberForReadNow(s.app.ctx, digestOf(solver.api_token))?.name).toBe('Cached Solver');
  });

  it('a keyed write its transaction refused for a changed token keeps no answer: the retry with the new token is written', async () => {
    const m = await register(s, 'Keyed Poster');
    expect((await s.call('GET', '/api/v1/chat', { token: m.api_token })).status).toBe(200);
    expect(memberForReadNow(s.app.ctx, digestOf(m.api_token))?.name).toBe('Keyed Poster');
    const renewed = `cmn_${randomBytes(32).toString('base64url')}`;
    await s.app.ctx.sql`UPDATE identities SET token_hash = ${hashToken(renewed)} WHERE token_hash = ${hashToken(m.api_token)}`;
    const key = randomUUID();
    const body = { title: 'keyed', body: 'posted under one key', reward_points: 3 };
    const stale = await s.call('POST', '/api/v1/habitat/tasks', { token: m.api_token, body, headers: { 'idempotency-key': key } });
    expect(stale.status).toBe(401);
    expect(stale.json.error.code).toBe('UNAUTHORIZED');
    const retry = await s.call('POST', '/api/v1/habitat/tasks', { token: renewed, body, headers: { 'idempotency-key': key } });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    const [n] = await s.app.ctx.sql`SELECT count(*)::int AS n FROM tasks WHERE id = ${retry.json.data.id}`;
    expect(n?.n).toBe(1);
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
      await chatIndexed(b); // the first post's point is in (docs/chat.md "Indexing")
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
