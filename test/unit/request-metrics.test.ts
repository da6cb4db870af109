// The request metrics are kept in plain numbers (src/transport/http/request-metrics.ts) instead of
// prom-client's labelled Counter and Histogram: their text must be what prom-client writes for the
// same observations, in both of its formats.
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestMetrics } from '../../src/transport/http/request-metrics.js';

const OBSERVED: [string, string, number, number][] = [
  ['GET', '/api/v1/chat', 200, 0.0004],
  ['GET', '/api/v1/chat', 200, 0.003],
  ['GET', '/api/v1/chat', 304, 0.0011],
  ['POST', '/api/v1/chat', 200, 0.02],
  ['GET', '/api/v1/ai/{registration_number}', 404, 7],
  ['GET', 'unmatched', 404, 0.001],
];

function promClient(observed = OBSERVED): Registry {
  const registry = new Registry();
  const requests = new Counter({
    name: 'commons_http_requests_total',
    help: 'HTTP requests answered, by route pattern and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'commons_http_request_duration_seconds',
    help: 'Time from the parsed request to the answer, by route pattern',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  for (const [method, route, status, s] of observed) {
    requests.labels(method, route, String(status)).inc();
    latency.labels(method, route).observe(s);
  }
  return registry;
}

describe('request metrics', () => {
  it('write the text prom-client writes for the same requests, and its JSON', async () => {
    const registry = new Registry();
    const mine = new RequestMetrics(registry);
    // Observers made and not used (the lean path makes its 304 observer at start) write nothing.
    mine.child('GET', '/api/v1/documents/constitution', 304);
    for (const [method, route, status, s] of OBSERVED) mine.child(method, route, status).observe(s);
    const reference = promClient();
    expect(await registry.metrics()).toBe(await reference.metrics());
    // Without exemplars (prom-client writes `exemplar: null` on each bucket; we keep none).
    const json = await reference.getMetricsAsJSON();
    const noExemplars = json.map((m) => ({
      ...m,
      values: m.values.map((v) => {
        const { exemplar: _, ...rest } = v as typeof v & { exemplar?: unknown };
        return rest;
      }),
    }));
    expect(await registry.getMetricsAsJSON()).toEqual(noExemplars);
  });

  it('write nothing before the first request', async () => {
    const registry = new Registry();
    new RequestMetrics(registry).child('GET', '/api/v1/chat', 200);
    expect(await registry.metrics()).toBe(await promClient([]).metrics());
  });
});
