// /metrics: the Prometheus text format from a registry of this app, request counts by
// route pattern and status, latency histograms, gauges other areas set, figures read from the
// database at scrape time, and access for the operator token or direct loopback requests only.
import { randomBytes } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Residents } from '../../src/actors/residents.js';
import { presenceOf } from '../../src/domain/presence.js';
import { NO_CREDENTIAL } from '../../src/transport/admission/credential.js';
import { idOf } from '../helpers/db.js';
import { sample, scrape as scrapeOf } from '../helpers/metrics.js';
import { OPERATOR_TOKEN as OP } from '../helpers/operator.js';
import { call, register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  // Listening on every interface lets a request arrive from a non-loopback address below.
  s = await startTestServer({ OPERATOR_TOKEN: OP, HOST: '0.0.0.0' });
});
afterAll(async () => {
  await s.close();
});

const scrape = (): Promise<string> => scrapeOf(s);

describe('/metrics', () => {
  it('serves the Prometheus text format with every promised family', async () => {
    const r = await s.call('GET', '/metrics');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const family of [
      'commons_http_requests_total counter',
      'commons_http_request_duration_seconds histogram',
      'commons_ws_sessions gauge',
      'commons_residents_online gauge',
      'commons_bus_errors_total counter',
      'commons_db_errors_total counter',
      'commons_scheduler_ticks_total counter',
      'commons_deposits gauge',
      'commons_rate_limited_total counter',
      'commons_register_difficulty_bits gauge',
      'commons_register_pow_refused_total counter',
    ]) {
      expect(r.text).toContain(`# TYPE ${family}`);
    }
  });

  it('counts requests by route pattern (not raw path) and status, with latency buckets', async () => {
    await s.call('GET', '/api/v1/ai/AI-00000042');
    await s.call('GET', '/api/v1/ai/AI-00000043');
    await s.call('GET', '/definitely/not/here');
    const text = await scrape();
    expect(text).toContain('commons_http_requests_total{method="GET",route="/api/v1/ai/{registration_number}",status="404"} 2');
    expect(text).toContain('commons_http_requests_total{method="GET",route="unmatched",status="404"} 1');
    expect(text).not.toContain('AI-00000042');
    expect(text).toMatch(
      /commons_http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/api\/v1\/ai\/{registration_number}"\} \d+/,
    );
    expect(text).toMatch(/commons_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/ai\/{registration_number}"\} 2/);
  });

  it('shows the gauges and counters other areas set through ctx.metrics', async () => {
    // The real stream and bus set these too (test/metrics-wiring.test.ts); this checks the plumbing.
    const before = await scrape();
    const m = s.app.ctx.metrics;
    m.wsSessions.inc();
    m.wsSessions.inc();
    m.wsSessions.dec();
    m.busErrors.inc();
    const text = await scrape();
    m.wsSessions.dec();
    expect(sample(text, 'commons_ws_sessions')).toBe((sample(before, 'commons_ws_sessions') ?? 0) + 1);
    expect(sample(text, 'commons_bus_errors_total')).toBe((sample(before, 'commons_bus_errors_total') ?? 0) + 1);
  });

  it('reads residents online from the database at scrape time', async () => {
    const before = sample(await scrape(), 'commons_residents_online') ?? -1;
    const a = await register(s, 'Online');
    expect((await s.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token, body: {} })).status).toBe(200);
    const b = await register(s, 'Long gone');
    expect((await s.call('POST', '/api/v1/habitat/heartbeat', { token: b.api_token, body: {} })).status).toBe(200);
    // Its heartbeat written (a flush after it never rewrites the time), then 31 minutes pass for b:
    // SQL is the only way here (this server runs on the wall clock).
    await (presenceOf(s.app.ctx) as Residents).flush();
    await s.app.ctx.sql`UPDATE identities SET last_heartbeat_at = now() - interval '31 minutes' WHERE id = ${idOf(b.registration_number)}`;
    expect(sample(await scrape(), 'commons_residents_online')).toBe(before + 1);
  });

  it('reads deposits by state from the database at scrape time', async () => {
    // A server of its own with a treasury address, so deposits are made through the API and the
    // gauge is checked against known, non-zero counts.
    const t = await startTestServer({
      TREASURY_ETH_ADDRESS: '0x1111111111111111111111111111111111111111',
      ETH_RPC_URL: 'http://127.0.0.1:9',
    });
    try {
      expect(await scrapeOf(t)).not.toMatch(/^commons_deposits\{/m);
      for (let i = 0; i < 3; i++) {
        const r = await t.call('POST', '/api/v1/treasury/deposits', {
          body: { tx_hash: `0x${randomBytes(32).toString('hex')}`, contributor_name: 'm' },
        });
        expect(r.status, r.text).toBe(200);
        expect(r.json.data.state).toBe('submitted');
      }
      expect(sample(await scrapeOf(t), 'commons_deposits{state="submitted"}')).toBe(3);
    } finally {
      await t.close();
    }
  });

  it('has a registry per app: a second app starts from zero', async () => {
    const other = await startTestServer();
    try {
      s.app.ctx.metrics.busErrors.inc();
      const text = (await other.call('GET', '/metrics')).text;
      expect(sample(text, 'commons_bus_errors_total')).toBe(0);
      expect(text).not.toContain('/api/v1/ai/{registration_number}');
    } finally {
      await other.close();
    }
  });
});

describe('/metrics access', () => {
  it('opens to the operator token', async () => {
    expect((await s.call('GET', '/metrics', { token: OP })).status).toBe(200);
  });

  it('refuses a wrong or member token with 401 UNAUTHORIZED, even from loopback', async () => {
    const m = await register(s, 'Curious');
    for (const token of ['nope', m.api_token]) {
      const r = await s.call('GET', '/metrics', { token });
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('UNAUTHORIZED');
      expect(r.text).not.toContain('commons_http_requests_total');
    }
  });

  it('refuses a request relayed by a proxy on loopback with 403 FORBIDDEN', async () => {
    const relayed: Record<string, string>[] = [{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }];
    for (const headers of relayed) {
      const r = await s.call('GET', '/metrics', { headers });
      expect(r.status).toBe(403);
      expect(r.json.error.code).toBe('FORBIDDEN');
    }
  });

  it('refuses a request from a non-loopback address with 403, and opens it to the operator token', async () => {
    const route = s.app.router.match('GET', '/metrics');
    if (route.kind !== 'found') throw new Error('no /metrics route');
    const req = { headers: {}, credential: NO_CREDENTIAL, ip: '203.0.113.7' } as never;
    await expect(route.route.handler(req, s.app.ctx)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && !i.internal && i.family === 'IPv4');
    if (external) {
      // Over the wire too, when this machine has a non-loopback address to come from.
      const base = `http://${external.address}:${s.app.port}`;
      const r = await call(base, 'GET', '/metrics');
      expect(r.status).toBe(403);
      expect((await call(base, 'GET', '/metrics', { token: OP })).status).toBe(200);
    }
  });
});
