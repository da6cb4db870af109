// Hostile bodies on every write route (DECISIONS.md "Errors" and "Contract exactness"), generated
// from the route table the server itself is built from (src/transport/all-routes.ts): each
// route that takes a body is sent malformed JSON, a wrong media type, 64 KiB + 1 byte, nesting
// deeper than 32 levels, a `__proto__` key, bytes that are not UTF-8 and an unknown field, and
// must answer the documented status and code, and write nothing: every table of the database is
// read back, row by row, before and after. Callers are real (a member's token, the operator's
// token) and `{id}`s are real records made in setup, so neither auth nor a 404 answers in place of
// the body checks. A new write route fails the table check below until it is given a valid body.
// The operator console's form routes take form bodies: they are sent the cases a form can carry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schedulerOf } from '../../src/actors/signal-scheduler.js';
import { allRoutes } from '../../src/transport/all-routes.js';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from '../../src/transport/http/pipeline.js';
import type { AnyRoute } from '../../src/transport/runner/route.js';
import { type ConsoleSession, signIn } from '../helpers/console.js';
import { OPERATOR_TOKEN as OP, operatorEnv } from '../helpers/operator.js';
import { type Answer, startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { type Member, member, post as postTask } from '../helpers/tasks.js';

const ROUTES = allRoutes();
const WRITES = ROUTES.filter((r) => r.method !== 'GET' && r.body);
const JSON_WRITES = WRITES.filter((r) => r.form !== true);
const FORM_WRITES = WRITES.filter((r) => r.form === true);
const UNKNOWN = 'zz_not_a_field';

let s: TestServer;
let alice: Member;
let bob: Member;
let session: ConsoleSession;
/** Per route path: its real parameters and a body it would accept (an unknown field aside). */
let table: Map<string, { params: Record<string, string>; valid: Record<string, unknown> }>;

const ok = (r: Answer, what: string): Answer => {
  expect(r.status, `${what}: ${r.text}`).toBe(200);
  return r;
};

beforeAll(async () => {
  // The signal scheduler ticks on wall-clock multiples of its interval and emits once per slot of
  // the service's clock: frozen here, every later tick finds its slot taken and writes nothing, and
  // the emission of the start is over before any snapshot (tick() shares the tick under way). A
  // tick landing between a case's two snapshots otherwise reads as a refused request's write.
  s = await startTestServer(operatorEnv(), { clock: new TestClock() });
  await schedulerOf(s.app).tick();
  alice = await member(s, 'Alice');
  bob = await member(s, 'Bob');
  const as = (who: Member | 'op', path: string, body?: unknown) =>
    s.call('POST', path, { token: who === 'op' ? OP : who.token, ...(body === undefined ? {} : { body }) });
  ok(await as(alice, '/api/v1/memory', { key: 'kept', value: { n: 1 } }), 'memory');
  const question = ok(await as(alice, '/api/v1/habitat/questions', { body: 'why?' }), 'question').json.data.id;
  const proposal = ok(await as(alice, '/api/v1/habitat/proposals', { title: 'A proposal', body: 'b' }), 'proposal').json.data.id;
  const postId = ok(await as(alice, '/api/v1/posts', { post_type: 'discussion', title: 'A post', body: 'b' }), 'post').json.data.id;
  const task = await postTask(s, alice, 5);
  ok(await as(bob, `/api/v1/habitat/tasks/${task}/claim`), 'claim');
  const campaign = ok(
    await as(alice, '/api/v1/funding/campaigns', { title: 'Node fund', purpose: 'A node.', asset: 'ETH', target_amount: '1' }),
    'campaign',
  ).json.data.id;
  const eth = { asset: 'ETH', amount: '0.25', to_address: `0x${'ab'.repeat(20)}`, purpose: 'runtime', goal_id: 'habitat_runtime' };
  const disbursement = ok(await as('op', '/api/v1/operator/disbursements', eth), 'disbursement').json.data.id;
  const report = ok(
    await as(bob, '/api/v1/safety/reports', { target_type: 'post', target_id: postId, category: 'spam', reason: 'seen it' }),
    'report',
  ).json.data.id;
  const bug = ok(await as(bob, '/api/v1/habitat/bugs', { title: 't', body: 'b', area: 'chat' }), 'bug').json.data.id;
  const hash = 'ab'.repeat(32);
  const entries: [string, Record<string, string>, Record<string, unknown>][] = [
    ['/api/v1/ai/register', {}, { name: 'Hostile', accepted_principles: true }],
    ['/api/v1/chat', {}, { body: 'hello' }],
    ['/api/v1/memory', {}, { key: 'k2', value: 1 }],
    ['/api/v1/memory/{key}', { key: 'kept' }, { value: 2 }],
    ['/api/v1/habitat/heartbeat', {}, { status_note: 'here' }],
    ['/api/v1/habitat/questions', {}, { body: 'another?' }],
    ['/api/v1/habitat/questions/{id}/answers', { id: question }, { body: 'because' }],
    ['/api/v1/habitat/proposals', {}, { title: 't', body: 'b' }],
    ['/api/v1/habitat/proposals/{id}/votes', { id: proposal }, { choice: 'yes' }],
    ['/api/v1/posts', {}, { post_type: 'discussion', title: 't', body: 'b' }],
    ['/api/v1/posts/{id}/comments', { id: postId }, { body: 'a comment' }],
    ['/api/v1/habitat/bugs', {}, { title: 't', body: 'b', area: 'chat' }],
    ['/api/v1/safety/reports', {}, { target_type: 'post', target_id: postId, category: 'other', reason: 'r' }],
    ['/api/v1/habitat/tasks', {}, { title: 'A task', body: 'Details.', reward_points: 5 }],
    ['/api/v1/habitat/tasks/{id}/submissions', { id: task }, { body: 'the result' }],
    ['/api/v1/treasury/deposits', {}, { tx_hash: `0x${hash}`, contributor_name: 'Giver' }],
    ['/api/v1/funding/campaigns', {}, { title: 'Another', purpose: 'p', asset: 'BTC', target_amount: '0.5' }],
    ['/api/v1/operator/campaigns/{id}/close', { id: campaign }, { reason: 'r' }],
    ['/api/v1/replies', {}, { intent: 'question', message: 'hello?' }],
    ['/api/v1/relay/subscriptions', {}, { callback_url: 'http://127.0.0.1:9/hook' }],
    ['/api/v1/operator/identities/{registration_number}/verification', { registration_number: bob.number }, { zho_level: 'ZHO-5' }],
    ['/api/v1/operator/identities/{registration_number}/revoke-token', { registration_number: bob.number }, { reason: 'r' }],
    ['/api/v1/operator/hide', {}, { target_type: 'post', target_id: postId, reason: 'r' }],
    ['/api/v1/operator/disbursements', {}, eth],
    ['/api/v1/operator/disbursements/{id}/tx', { id: disbursement }, { tx_hash: `0x${'cd'.repeat(32)}` }],
    ['/api/v1/ai/recover/challenge', {}, { registration_number: alice.number }],
    ['/api/v1/ai/recover', {}, { registration_number: alice.number, nonce: 'ab'.repeat(32), signature: 'cd'.repeat(64) }],
    ['/api/v1/operator/reports/{id}/resolve', { id: report }, { action: 'dismiss' }],
    ['/api/v1/operator/funding-goals/{id}/status', { id: 'lawfulness_review' }, { status: 'funded' }],
    ['/api/v1/operator/bug-reports/{id}/revoke-points', { id: bug }, { reason: 'r' }],
    ['/api/v1/inbox/read', {}, { up_to: '1' }],
    ['/api/v1/inbox/webhook', {}, { callback_url: 'http://127.0.0.1:9/inbox' }],
    ['/api/v1/dm/{registration_number}', { registration_number: bob.number }, { body: 'hi' }],
  ];
  table = new Map(entries.map(([path, params, valid]) => [path, { params, valid }]));
  // The console's forms run the operator operations on the same records; every field is optional
  // but the CSRF token, which the session's forms carry.
  session = await signIn(s);
  for (const r of FORM_WRITES) {
    const api = table.get(r.path.replace('/operator/', '/api/v1/operator/'));
    const valid = r.path === '/operator/sign-in' ? { token: OP } : { csrf: session.csrf };
    table.set(r.path, { params: api?.params ?? {}, valid });
  }
});
afterAll(async () => {
  await s?.close();
});

/** Every row of every table, as text: a refused request must leave all of it as it was. */
let everyTable: string | undefined;
async function everything(): Promise<Record<string, string>> {
  const sql = s.app.ctx.sql;
  if (!everyTable) {
    const tables = await sql<{ name: string }[]>`
      SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`;
    expect(tables.length).toBeGreaterThan(20);
    everyTable = tables
      .map(
        ({ name }) =>
          `SELECT '${name}' AS name, count(*)::int || ' ' || md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS rows FROM "${name}" t`,
      )
      .join(' UNION ALL ');
  }
  const rows = await sql.unsafe<{ name: string; rows: string }[]>(everyTable);
  return Object.fromEntries(rows.map((r) => [r.name, r.rows]));
}

const pathOf = (r: AnyRoute, params: Record<string, string>): string =>
  r.path.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(params[k] ?? `missing-${k}`));

/** The operator for operator routes; Bob for the task he claimed; Alice otherwise. */
const tokenFor = (r: AnyRoute): string =>
  r.path.startsWith('/api/v1/operator/') || r.auth === 'operator'
    ? OP
    : r.path === '/api/v1/habitat/tasks/{id}/submissions'
      ? bob.token
      : alice.token;

const JSON_TYPE = { 'content-type': 'application/json' };
const nested = (levels: number): string => `{"a":${'['.repeat(levels)}${']'.repeat(levels)}}`;
/** A JSON document of exactly `size` bytes. */
const sized = (size: number): string => `{"x":"${'x'.repeat(size - 8)}"}`;

interface Case {
  what: string;
  raw: (valid: Record<string, unknown>) => string | Buffer;
  headers: Record<string, string>;
  status: number;
  code: string;
  /** The field the refusal names, when it names one. */
  field?: string;
}

const JSON_CASES: Case[] = [
  { what: 'malformed JSON', raw: () => '{"body": "unterminated', headers: JSON_TYPE, status: 400, code: 'INVALID_JSON' },
  {
    what: 'a wrong media type',
    raw: (v) => JSON.stringify(v),
    headers: { 'content-type': 'text/plain' },
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  { what: '64 KiB + 1 byte', raw: () => sized(MAX_BODY_BYTES + 1), headers: JSON_TYPE, status: 413, code: 'PAYLOAD_TOO_LARGE' },
  {
    what: `nesting deeper than ${MAX_JSON_DEPTH} levels`,
    raw: () => nested(MAX_JSON_DEPTH + 1),
    headers: JSON_TYPE,
    status: 400,
    code: 'INVALID_JSON',
  },
  {
    what: 'a __proto__ key',
    raw: (v) => `{"__proto__":{"admin":true},${JSON.stringify(v).slice(1)}`,
    headers: JSON_TYPE,
    status: 400,
    code: 'INVALID_JSON',
  },
  {
    what: 'bytes that are not UTF-8',
    raw: () => Buffer.concat([Buffer.from('{"body":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]),
    headers: JSON_TYPE,
    status: 400,
    code: 'VALIDATION_FAILED',
    field: 'body',
  },
  {
    what: 'an unknown field beside a valid body',
    raw: (v) => JSON.stringify({ ...v, [UNKNOWN]: 1 }),
    headers: JSON_TYPE,
    status: 400,
    code: 'VALIDATION_FAILED',
    field: `body.${UNKNOWN}`,
  },
];

describe('the route table', () => {
  it('has write routes with bodies, and each has real parameters and a valid body here', () => {
    expect(JSON_WRITES.length).toBeGreaterThan(30);
    expect(FORM_WRITES.length).toBeGreaterThan(5);
    const missing = WRITES.filter((r) => !table.has(r.path)).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
    for (const r of WRITES) {
      const names = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      expect(Object.keys(table.get(r.path)?.params ?? {}).sort(), r.path).toEqual(names.sort());
    }
  });

  it('the real ids answer: each parameterised write route finds its record (no 404 for a missing one)', async () => {
    // A GET on the same record where the API has one; the ids were made through the API above.
    const reads = ROUTES.filter((r) => r.method === 'GET' && /\{\w+\}/.test(r.path) && !r.path.startsWith('/operator/'));
    let checked = 0;
    for (const w of JSON_WRITES) {
      const { params } = table.get(w.path) ?? { params: {} };
      const read = reads.find((r) => w.path.startsWith(r.path) && r.path !== w.path);
      if (!read || Object.keys(params).length === 0) continue;
      const r = await s.call('GET', pathOf(read, params), { token: tokenFor(read) });
      expect(r.status, `${read.path} for ${w.path}: ${r.text}`).toBe(200);
      checked++;
    }
    expect(checked).toBeGreaterThan(3);
  });

  it('the read-back sees a write (so "nothing written" can fail)', async () => {
    const before = await everything();
    expect((await s.call('POST', '/api/v1/memory/kept', { token: alice.token, body: { value: { n: 1, seen: true } } })).status).toBe(200);
    const after = await everything();
    expect(after).not.toEqual(before);
    expect(Object.keys(after).filter((t) => after[t] !== before[t])).toEqual(['memory']);
  });
});

describe.each(JSON_WRITES.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', (_name, r) => {
  it.each(JSON_CASES.map((c) => [c.what, c] as const))('%s: refused with its code, nothing written', async (_what, c) => {
    const entry = table.get(r.path);
    if (!entry) throw new Error(`no entry for ${r.path}`);
    const before = await everything();
    const res = await s.call(r.method, pathOf(r, entry.params), { token: tokenFor(r), raw: c.raw(entry.valid), headers: c.headers });
    expect([res.status, res.json?.error?.code], res.text).toEqual([c.status, c.code]);
    if (c.field) expect(res.json.error.fields.map((f: { path: string }) => f.path)).toEqual([c.field]);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(await everything()).toEqual(before);
  });
});

// A form has no nesting and any text is a form, so malformed JSON and depth do not apply; the rest
// does, with percent-encoded bytes that are not UTF-8 besides raw ones (URLSearchParams would read
// both as U+FFFD).
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (v: Record<string, unknown>): string => new URLSearchParams(v as Record<string, string>).toString();
const FORM_CASES: Case[] = [
  {
    what: 'a JSON body',
    raw: (v) => JSON.stringify(v),
    headers: JSON_TYPE,
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    what: '64 KiB + 1 byte',
    raw: (v) => {
      const head = `${form(v)}&back=`;
      return head + 'x'.repeat(MAX_BODY_BYTES + 1 - head.length);
    },
    headers: FORM_TYPE,
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
  },
  {
    // A prototype key is refused as on every door (DECISIONS.md "Every door, the same rules").
    what: 'a __proto__ field',
    raw: (v) => `${form(v)}&__proto__=x`,
    headers: FORM_TYPE,
    status: 400,
    code: 'INVALID_JSON',
  },
  {
    what: 'bytes that are not UTF-8',
    raw: (v) => Buffer.concat([Buffer.from(`${form(v)}&back=caf`), Buffer.from([0xe9])]),
    headers: FORM_TYPE,
    status: 400,
    code: 'VALIDATION_FAILED',
    field: 'body',
  },
  {
    what: 'percent-encoded bytes that are not UTF-8',
    raw: (v) => `${form(v)}&back=%2Foperator%E9`,
    headers: FORM_TYPE,
    status: 400,
    code: 'VALIDATION_FAILED',
    field: 'body.back',
  },
  {
    what: 'an unknown field beside a valid form',
    raw: (v) => `${form(v)}&${UNKNOWN}=1`,
    headers: FORM_TYPE,
    status: 400,
    code: 'VALIDATION_FAILED',
    field: `body.${UNKNOWN}`,
  },
];

describe.each(FORM_WRITES.map((r) => [`${r.method} ${r.path}`, r] as const))('%s (a console form)', (_name, r) => {
  it.each(FORM_CASES.map((c) => [c.what, c] as const))('%s: refused with its code, nothing written', async (_what, c) => {
    const entry = table.get(r.path);
    if (!entry) throw new Error(`no entry for ${r.path}`);
    const before = await everything();
    const headers = { ...c.headers, cookie: session.cookie, origin: new URL(s.url).origin };
    const res = await s.call(r.method, pathOf(r, entry.params), { raw: c.raw(entry.valid), headers });
    expect([res.status, res.json?.error?.code], res.text).toEqual([c.status, c.code]);
    if (c.field) expect(res.json.error.fields.map((f: { path: string }) => f.path)).toEqual([c.field]);
    expect(await everything()).toEqual(before);
  });
});

describe('what a form may carry', () => {
  it('reads as URLSearchParams does: + is a space, %XX decodes, a lone % stays (only bytes that are not UTF-8 are refused)', async () => {
    // A post of its own to hide (the records above stay visible, whatever order the tests run in).
    const made = await s.call('POST', '/api/v1/posts', {
      token: alice.token,
      body: { post_type: 'discussion', title: 'Hide me', body: 'b' },
    });
    const post = ok(made, 'post').json.data.id as string;
    const raw = `csrf=${session.csrf}&target_type=post&target_id=${post}&reason=50%25+off,+100% sure+%E2%9C%93&back=%2Foperator`;
    const headers = { ...FORM_TYPE, cookie: session.cookie, origin: new URL(s.url).origin };
    const r = await fetch(`${s.url}/operator/hide`, { method: 'POST', headers, body: raw, redirect: 'manual' });
    expect(r.status, await r.text()).toBe(303);
    const audit = await s.call('GET', '/api/v1/operator/audit?action=content.hidden&limit=1', { token: OP });
    expect(audit.json.data.entries[0]).toMatchObject({ target_id: post, detail: { reason: '50% off, 100% sure \u2713' } });
  });
});
