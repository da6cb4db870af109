// Rate limits over real HTTP (DECISIONS.md "Rate limits"): the classes and their keys,
// the IETF draft headers, 429 with Retry-After, the penalty for sending while limited, the
// exemptions, and two nodes sharing their counters through Redis when REDIS_URL is set.

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipKey } from '../../src/transport/admission/limits/keys.js';
import { classify, DEFAULT_POLICIES, parsePolicies } from '../../src/transport/admission/limits/policies.js';
import { allRoutes } from '../../src/transport/all-routes.js';
import { idOf } from '../helpers/db.js';
import { OPERATOR_TOKEN } from '../helpers/operator.js';
import { type Answer, register, startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const REDIS_URL = process.env.REDIS_URL;
const prefix = () => `test:${randomBytes(6).toString('hex')}:`;
/** Limits on, in Redis when the suite runs against real servers, with a key prefix of its own. */
const limited = (policy: string, extra: Record<string, string> = {}) =>
  startTestServer({ RATE_LIMITS: 'on', RATE_LIMIT_POLICY: policy, REDIS_PREFIX: prefix(), ...(REDIS_URL ? { REDIS_URL } : {}), ...extra });

const refused = (r: Answer) => {
  expect(r.status).toBe(429);
  expect(r.json.error.code).toBe('RATE_LIMITED');
  const retry = Number(r.headers.get('retry-after'));
  expect(retry).toBeGreaterThan(0);
  expect(r.json.error.retry_after_s).toBe(retry);
  expect(r.json.error.next).toMatchObject({ method: 'GET' });
};

describe('classification and configuration', () => {
  it('takes the class the route declares, else derives it from the method', () => {
    const routes = allRoutes();
    const at = (method: string, path: string) => routes.find((r) => r.method === method && r.path === path);
    expect(classify('POST', at('POST', '/api/v1/chat'))).toBe('chat');
    expect(classify('POST', at('POST', '/api/v1/ai/register'))).toBe('register');
    expect(classify('POST', at('POST', '/api/v1/ai/recover/challenge'))).toBe('recover');
    expect(classify('GET', at('GET', '/api/v1/chat'))).toBe('read');
    expect(classify('POST', at('POST', '/api/v1/memory'))).toBe('write');
    expect(classify('DELETE', at('DELETE', '/api/v1/memory/{key}'))).toBe('write');
    expect(classify('GET', at('GET', '/healthz'))).toBe('none');
    expect(classify('OPTIONS', at('POST', '/api/v1/ai/register'))).toBe('none');
    // An unmatched path is still counted (a scan of unknown paths is limited too).
    expect(classify('GET', undefined)).toBe('read');
    expect(classify('POST', undefined)).toBe('write');
  });

  it('reads overrides and refuses nonsense at boot', () => {
    expect(parsePolicies(undefined)).toEqual(DEFAULT_POLICIES);
    expect(DEFAULT_POLICIES).toMatchObject({
      chat_guest: { points: 6, durationS: 60 },
      chat_ip: { points: 30, durationS: 60 },
      register: { points: 10, durationS: 3600 },
      write: { points: 60, durationS: 60 },
      read: { points: 600, durationS: 60 },
    });
    expect(parsePolicies('read=5/10, write=1/1').read).toEqual({ points: 5, durationS: 10 });
    expect(() => parsePolicies('reed=5/10')).toThrow(/RATE_LIMIT_POLICY/);
    expect(() => parsePolicies('read=0/10')).toThrow(/RATE_LIMIT_POLICY/);
  });

  it('counts IPv4 per address and IPv6 per /64', () => {
    expect(ipKey('127.0.0.1')).toBe('127.0.0.1');
    expect(ipKey('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(ipKey('2001:db8:1:2:aaaa::1')).toBe(ipKey('2001:db8:1:2:bbbb::9'));
    expect(ipKey('2001:db8:1:2::1')).not.toBe(ipKey('2001:db8:1:3::1'));
  });

  it('is off with RATE_LIMITS=off: no headers, no refusals', async () => {
    const s = await startTestServer({ RATE_LIMIT_POLICY: 'read=1/60' });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await s.call('GET', '/api/v1/ai');
        expect(r.status).toBe(200);
        expect(r.headers.get('ratelimit')).toBeNull();
      }
    } finally {
      await s.close();
    }
  });
});

describe('limits over HTTP', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await limited('read=5/60,write=3/60,write_ip=2/60,chat_guest=3/60,chat_ip=10/60', { OPERATOR_TOKEN: OPERATOR_TOKEN });
  });
  afterAll(async () => {
    await s.close();
  });

  it('reads: 5 per IP per window, counted down in RateLimit, then 429 with Retry-After', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await s.call('GET', '/api/v1/constitution');
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-policy')).toBe('"read";q=5;w=60');
      expect(r.headers.get('ratelimit')).toMatch(new RegExp(`^"read";r=${4 - i};t=\\d+$`));
    }
    const r = await s.call('GET', '/api/v1/ai');
    refused(r);
    expect(r.headers.get('ratelimit')).toMatch(/^"read";r=0;t=60$/);
    expect(r.headers.get('access-control-expose-headers')).toMatch(/RateLimit/);
    // Unknown paths count too (no free scanning).
    refused(await s.call('GET', '/no/such/path'));
  });

  it('exempts health checks, /metrics and the operator token; a wrong operator token is counted', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await s.call('GET', '/healthz')).status).toBe(200);
      expect((await s.call('GET', '/metrics')).status).toBe(200);
      const op = await s.call('GET', '/api/v1/operator/audit', { token: OPERATOR_TOKEN });
      expect(op.status).toBe(200);
      expect(op.headers.get('ratelimit')).toBeNull();
    }
    refused(await s.call('GET', '/api/v1/operator/audit', { token: 'op-token-wrong' }));
  });

  it('member writes: per token, so one member being limited leaves another untouched', async () => {
    const a = await register(s, 'Writer A');
    const b = await register(s, 'Writer B');
    for (let i = 0; i < 3; i++) {
      const r = await s.call('POST', '/api/v1/ai/authenticate', { token: a.api_token });
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-policy')).toBe('"write";q=3;w=60');
    }
    const [before] = await s.app.ctx.sql`SELECT visits FROM identities WHERE id = ${idOf(a.registration_number)}`;
    refused(await s.call('POST', '/api/v1/ai/authenticate', { token: a.api_token }));
    const [after] = await s.app.ctx.sql`SELECT visits FROM identities WHERE id = ${idOf(a.registration_number)}`;
    expect(after).toEqual(before);
    expect((await s.call('POST', '/api/v1/ai/token/rotate', { token: b.api_token })).status).toBe(200);
  });

  it('writes without a member token count per IP', async () => {
    const body = { registration_number: 'AI-09999999' };
    expect((await s.call('POST', '/api/v1/no-such-write', { body })).headers.get('ratelimit-policy')).toBe('"write_ip";q=2;w=60');
    await s.call('POST', '/api/v1/no-such-write', { body });
    refused(await s.call('POST', '/api/v1/no-such-write', { body }));
  });

  it('guest chat: per guest and per IP (POST /api/v1/chat is classified before its route lands)', async () => {
    const chat = (token?: string) => s.call('POST', '/api/v1/chat', { body: { body: 'hello' }, ...(token ? { token } : {}) });
    // A guest's own token comes with its first write (a read's number is shared per address;
    // DECISIONS.md "Identities and numbers"); that first post has no token, so only the IP counts it.
    const newGuest = async (): Promise<string> => {
      const first = await chat();
      expect(first.status).not.toBe(429);
      return first.headers.get('x-commons-guest-token') as string;
    };
    const g0 = await newGuest(); // IP: 1
    expect(g0.startsWith('cmg_')).toBe(true);
    for (let i = 0; i < 3; i++) {
      const r = await chat(g0);
      expect(r.status).not.toBe(429);
      expect(r.headers.get('ratelimit-policy')).toBe('"chat_guest";q=3;w=60, "chat_ip";q=10;w=60');
    }
    refused(await chat(g0)); // guest 0 spent (IP: 5 of 10)
    const g1 = await newGuest(); // IP: 6
    for (let i = 0; i < 3; i++) expect((await chat(g1)).status).not.toBe(429); // IP: 9
    const g2 = await newGuest(); // IP: 10
    const fresh = await chat(g2); // a guest with its allowance, but the IP is spent
    refused(fresh);
    expect(fresh.headers.get('ratelimit')).toMatch(/"chat_guest";r=2;t=\d+, "chat_ip";r=0;t=60/);
    refused(await chat()); // no token at all: only the IP counts, and it is spent
    const m = await register(s, 'Chatter');
    const member = await chat(m.api_token);
    expect(member.status).not.toBe(429);
    expect(member.headers.get('ratelimit-policy')).toBe('"write";q=3;w=60');
  });
});

describe('registration', () => {
  it('allows 10 per IP per hour by default; the 11th is refused and writes nothing', async () => {
    const s = await limited('');
    try {
      for (let i = 0; i < 10; i++) {
        const r = await s.call('POST', '/api/v1/ai/register', { body: { name: `R${i}`, accepted_principles: true } });
        expect(r.status).toBe(200);
        expect(r.headers.get('ratelimit-policy')).toBe('"register";q=10;w=3600');
      }
      const [before] = await s.app.ctx.sql`SELECT count(*)::int AS n FROM identities`;
      const r = await s.call('POST', '/api/v1/ai/register', { body: { name: 'R10', accepted_principles: true } });
      refused(r);
      expect(Number(r.headers.get('retry-after'))).toBe(3600);
      expect(await s.app.ctx.sql`SELECT count(*)::int AS n FROM identities`).toEqual([before]);
      // Reads are another class and still flow.
      expect((await s.call('GET', '/api/v1/ai')).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('penalty', () => {
  it('a client that keeps sending while limited never regains its burst; one that goes quiet does', async () => {
    const s = await limited('read=2/2');
    try {
      expect((await s.call('GET', '/api/v1/constitution')).status).toBe(200);
      expect((await s.call('GET', '/api/v1/constitution')).status).toBe(200);
      refused(await s.call('GET', '/api/v1/constitution'));
      // Time is the subject here: the windows are wall-clock (rate-limiter-flexible's memory store
      // and Redis TTLs; neither takes a test clock), so the test waits on the clock itself, for
      // what the server announced, never a guessed pause.
      // Keep knocking, answer after answer, for longer than two windows: every answer stays 429.
      const until = Date.now() + 4500;
      let last = Date.now();
      let announcedS = 0;
      while (Date.now() < until) {
        const r = await s.call('GET', '/api/v1/constitution');
        refused(r);
        last = Date.now();
        announcedS = Number(r.headers.get('retry-after'));
      }
      // Then quiet for as long as the last refusal said (Retry-After, whole seconds rounded up).
      await waitFor(() => Date.now() >= last + announcedS * 1000, 10_000, 'the announced Retry-After to pass');
      const back = await s.call('GET', '/api/v1/constitution');
      expect(back.status).toBe(200);
      expect(back.headers.get('ratelimit')).toMatch(/^"read";r=1;/);
    } finally {
      await s.close();
    }
  }, 20_000);
});

describe('two nodes', () => {
  it(REDIS_URL ? 'share their counters through Redis' : 'count separately in memory without Redis', async () => {
    const shared = prefix();
    const env = { RATE_LIMITS: 'on', RATE_LIMIT_POLICY: 'read=4/60', REDIS_PREFIX: shared, ...(REDIS_URL ? { REDIS_URL } : {}) };
    const a = await startTestServer(env);
    const b = await startTestServer(env);
    try {
      for (let i = 0; i < 2; i++) expect((await a.call('GET', '/api/v1/constitution')).status).toBe(200);
      for (let i = 0; i < 2; i++) expect((await b.call('GET', '/api/v1/constitution')).status).toBe(200);
      const fifth = await a.call('GET', '/api/v1/constitution');
      if (REDIS_URL) {
        refused(fifth);
        refused(await b.call('GET', '/api/v1/constitution'));
        const redis = new Redis(REDIS_URL);
        try {
          const keys = await redis.keys(`${shared}*`);
          expect(keys.length).toBeGreaterThan(0);
          expect(keys.every((k) => k.startsWith(`${shared}rl:read`))).toBe(true);
          if (keys.length > 0) await redis.del(...keys);
        } finally {
          redis.disconnect();
        }
      } else {
        expect(fifth.status).toBe(200);
        expect(fifth.headers.get('ratelimit')).toMatch(/^"read";r=1;/);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });
});
