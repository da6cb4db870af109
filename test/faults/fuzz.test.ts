// Fuzz: 10,000 requests built from the route table plus mutations (invalid UTF-8,
// 10,000-deep nesting, __proto__ keys, huge numbers, duplicate keys, wrong content types, odd
// paths and tokens). No answer may be a 5xx, the server keeps answering, and its heap settles.
import v8 from 'node:v8';
import vm from 'node:vm';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { compileAll } from '../helpers/contract-gate.js';
import { OPERATOR_TOKEN as OP } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ OPERATOR_TOKEN: OP });
});
afterAll(async () => {
  await s.close();
});

const N = 10_000;

// A real collection before each heap reading, so "settles back" measures retention, not garbage.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const CONCURRENCY = 16;

const mutations: ((base: string) => { body: Buffer | string; type?: string })[] = [
  (b) => ({ body: b }),
  () => ({ body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]) }), // invalid UTF-8
  () => ({ body: `${'['.repeat(10_000)}${']'.repeat(10_000)}` }),
  () => ({ body: `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}` }),
  (b) => ({ body: `{"__proto__":{"admin":true},"x":${b}}` }),
  (b) => ({ body: `{"constructor":{"prototype":{"admin":true}},"x":${b}}` }),
  () => ({ body: '{"amount":1e400,"reward_points":123456789012345678901234567890,"limit":-0}' }),
  () => ({ body: '{"name":"a","name":"b","accepted_principles":true,"accepted_principles":false}' }),
  (b) => ({ body: b, type: 'text/plain' }),
  (b) => ({ body: b, type: 'application/x-www-form-urlencoded' }),
  (b) => ({ body: b, type: 'application/vnd.commons+json' }),
  (b) => ({ body: b.slice(0, Math.max(0, b.length - 1)) }),
  () => ({ body: '' }),
  () => ({ body: 'null' }),
];

it(`answers ${N} generated and mutated requests without a 5xx, and keeps serving`, async () => {
  const m = await register(s, 'Fuzzed');
  const tokens = [undefined, m.api_token, OP, 'cmn_forged', 'cmg_forged', 'Bearer', `cmn_${'a'.repeat(5000)}`];
  const routes = s.app.router.routes;
  const value = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.string(), fc.integer(), fc.double());
  const pathPart = fc.oneof(
    fc.constantFrom('AI-00000001', 'AI-99999999', '00000000-0000-4000-8000-000000000000', '..', '%00', '%E0%A4%A', 'x'.repeat(300)),
    fc.string({ maxLength: 20 }).map(encodeURIComponent),
  );
  const gen = fc.record({
    route: fc.integer({ min: 0, max: routes.length - 1 }),
    part: pathPart,
    fields: fc.dictionary(
      fc.constantFrom(
        'name',
        'accepted_principles',
        'body',
        'target_type',
        'target_id',
        'reason',
        'asset',
        'amount',
        'to_address',
        'purpose',
        'registration_number',
        'nonce',
        'signature',
        'zho_level',
        'verification_status',
        'key',
        'value',
      ),
      value,
    ),
    mutation: fc.integer({ min: 0, max: mutations.length - 1 }),
    token: fc.integer({ min: 0, max: tokens.length - 1 }),
    query: fc.constantFrom('', '?limit=0', '?limit=abc', '?before=%ZZ', '?limit=100&before=999999999999999999999', '?__proto__[x]=1'),
    methodSwap: fc.boolean(),
  });
  // The contract gate's validators are compiled lazily; compile them before the baseline.
  compileAll();
  const heapBefore = heap();
  let samples = fc.sample(gen, { numRuns: N, seed: 10 });
  const statuses = new Map<number, number>();
  let next = 0;
  const failures: string[] = [];
  const worker = async () => {
    while (next < samples.length) {
      const g = samples[next++] as (typeof samples)[number];
      const r = routes[g.route] as (typeof routes)[number];
      const path = r.path.replace(/\{[a-z_]+\}/g, g.part) + g.query;
      const method = g.methodSwap ? (r.method === 'GET' ? 'POST' : 'GET') : r.method;
      const headers: Record<string, string> = {};
      const token = tokens[g.token];
      if (token !== undefined) headers.authorization = `Bearer ${token}`;
      let body: Buffer | string | undefined;
      if (method !== 'GET') {
        const mut = (mutations[g.mutation] as (typeof mutations)[number])(JSON.stringify(g.fields));
        body = mut.body;
        headers['content-type'] = mut.type ?? 'application/json';
      }
      try {
        const res = await fetch(s.url + path, { method, headers, body });
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status >= 500) failures.push(`${method} ${path} -> ${res.status}`);
      } catch (e) {
        // A header value fetch itself refuses to send is not a request the server saw.
        if (!(e instanceof TypeError)) throw e;
        statuses.set(0, (statuses.get(0) ?? 0) + 1);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  samples = [];
  expect([...new Set(failures)].slice(0, 20)).toEqual([]);
  const sent = [...statuses].filter(([k]) => k !== 0).reduce((a, [, n]) => a + n, 0);
  expect(sent).toBeGreaterThanOrEqual(N * 0.95);
  expect([...statuses.keys()].some((k) => k >= 400 && k < 500)).toBe(true);
  // Still serving normally.
  expect((await s.call('GET', '/healthz')).status).toBe(200);
  // (The fuzzed member's token may have been rotated or revoked by generated calls: a new one.)
  const after = await register(s, 'After the storm');
  expect((await s.call('GET', '/api/v1/ai/me', { token: after.api_token })).status).toBe(200);
  expect(({} as Record<string, unknown>).admin).toBeUndefined();
  // The heap settles back: nothing of the 10,000 requests is retained beyond a small margin.
  await waitFor(() => heap() - heapBefore < 24 * 1024 * 1024, 10_000, 'the heap to settle within 24 MiB of its start');
}, 240_000);
