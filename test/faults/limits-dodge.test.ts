// Limits that cannot be dodged (DECISIONS.md "Reliability promises", "Rate limits"): a member
// token not yet seen valid counts against its address too, so random `cmn_` tokens get no bucket
// of their own; TRUST_PROXY decides whose X-Forwarded-For is believed. Both backends.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { clientAddress } from '../../src/transport/admission/client-ip.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

// One probe lookup an hour per address while over budget (default: one a second), so the count
// below does not depend on how fast the loop runs.
const limited = { RATE_LIMITS: 'on', RATE_LIMIT_POLICY: 'bad_token_ip=5/60,bad_token_probe=1/3600,write_ip=5/60,register=2/3600' };
let trusting: TestServer;
let plain: TestServer;
beforeAll(async () => {
  trusting = await startTestServer({ ...limited, TRUST_PROXY: '1' });
  plain = await startTestServer(limited);
});
afterAll(async () => {
  await trusting?.close();
  await plain?.close();
});

const from = (ip: string) => ({ 'x-forwarded-for': ip });
const memoryRows = async (s: TestServer) => (await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM memory`)[0]?.n;

describe('unverified tokens', () => {
  it('random member tokens count against the address: 401 five times, one probe, then 429, nothing written', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await trusting.call('POST', '/api/v1/memory', {
        token: `cmn_${randomBytes(24).toString('hex')}`,
        headers: from('198.51.100.1'),
        body: { key: 'k', value: 1 },
      });
      statuses.push(r.status);
      if (r.status === 429) expect(r.json.error.code).toBe('RATE_LIMITED');
    }
    // The sixth is the address's probe: a token outside the known record is still looked up.
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429, 429]);
    expect(await memoryRows(trusting)).toBe(0);
  });

  it('a valid token counts as itself once verified: more writes than the address allows', async () => {
    const a = await register(trusting, 'Verified writer', {}, from('198.51.100.2'));
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await trusting.call('POST', '/api/v1/memory', {
        token: a.api_token,
        headers: from('198.51.100.2'),
        body: { key: `k${i}`, value: i },
      });
      statuses.push(r.status);
    }
    expect(statuses).toEqual(Array(8).fill(200));
  });
});

describe('TRUST_PROXY', () => {
  it('with one trusted hop, each forwarded client has its own limits; a spoofed left part is ignored', async () => {
    const reg = (s: TestServer, xff: string) =>
      s.call('POST', '/api/v1/ai/register', { body: { name: 'Proxy test', accepted_principles: true }, headers: from(xff) });
    expect((await reg(trusting, '203.0.113.1')).status).toBe(200);
    expect((await reg(trusting, '203.0.113.1')).status).toBe(200);
    const third = await reg(trusting, '192.0.2.99, 203.0.113.1');
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).not.toBeNull();
    expect((await reg(trusting, '203.0.113.2')).status).toBe(200);
  });

  it('off (the default), X-Forwarded-For is not believed: changing it does not buy a new bucket', async () => {
    const reg = (xff: string) =>
      plain.call('POST', '/api/v1/ai/register', { body: { name: 'Spoofer', accepted_principles: true }, headers: from(xff) });
    expect((await reg('203.0.113.10')).status).toBe(200);
    expect((await reg('203.0.113.11')).status).toBe(200);
    const third = await reg('203.0.113.12');
    expect(third.status).toBe(429);
    const [n] = await plain.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM identities WHERE name = 'Spoofer'`;
    expect(n?.n).toBe(2);
  });

  it('CIDR ranges: addresses are taken from the right while the hop is a trusted proxy', () => {
    const trust = loadConfig({ TRUST_PROXY: '127.0.0.1/32, 10.0.0.0/8' }).trustProxy;
    expect(clientAddress(trust, '127.0.0.1', '9.9.9.9, 203.0.113.5, 10.1.2.3')).toBe('203.0.113.5');
    expect(clientAddress(trust, '198.51.100.7', '9.9.9.9')).toBe('198.51.100.7');
    expect(clientAddress(trust, '::ffff:127.0.0.1', '203.0.113.6')).toBe('203.0.113.6');
    expect(clientAddress(null, '127.0.0.1', '203.0.113.6')).toBe('127.0.0.1');
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/99' })).toThrow(/TRUST_PROXY/);
  });
});
