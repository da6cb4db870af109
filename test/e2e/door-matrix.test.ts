// The door matrix (DECISIONS.md "Every door, the same rules"; docs/security.md): for every write on
// every door that carries it (test/helpers/doors.ts generates the list from the service's own
// tables: routes, stream ops, MCP tools, A2A skills, console forms), the same cases, each answered
// with the same code in the door's shape, nothing written, and the node still ready after it:
//
//   bad_utf8       a byte no UTF-8 holds                       VALIDATION_FAILED (a JSON text frame: closed)
//   proto_key      a `__proto__` member                        INVALID_JSON
//   too_deep       nesting past 32                             INVALID_JSON
//   unknown_field  a member no schema has                      VALIDATION_FAILED
//   bad_token      a token that names nobody                   UNAUTHORIZED
//   spent_budget   the caller's budget spent over REST first   RATE_LIMITED
//   repeat_same    the same key, the same request              the first answer again
//   repeat_other   the same key, another request               IDEMPOTENCY_MISMATCH
//   stale_token    a member token the node cached, then changed   UNAUTHORIZED
//                  in the database only (a rotation on another
//                  node whose bus message has not come)
//   repeat_stale   the same key again after that change        UNAUTHORIZED (no stored answer)
//
// What does not apply is said per door: a route without a body reads none (no body cases on REST
// or the console), a form is flat strings (no nesting), the operator is not limited (no budget
// case for operator operations), a browser form sends no key (no repeats on the console). One
// server per backend for the whole matrix (limits on, each case from its own address).
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signIn } from '../helpers/console.js';
import { changedTables, type Fingerprint, fingerprinter, settled, staleUnderNode } from '../helpers/db.js';
import { flatArgs, nested, type Outcome, type Send, send, withMark, withProto } from '../helpers/door-send.js';
import { classOf, consoleSignIn, doorTargets, pathOf, sample, type Target } from '../helpers/doors.js';
import { OPERATOR_TOKEN, operatorEnv } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

type Json = Record<string, unknown>;
type CaseName =
  | 'bad_utf8'
  | 'proto_key'
  | 'too_deep'
  | 'unknown_field'
  | 'bad_token'
  | 'spent_budget'
  | 'repeat_same'
  | 'repeat_other'
  | 'stale_token'
  | 'repeat_stale';

const targets = doorTargets();
let s: TestServer;
let consoleSession: { cookie: string; csrf: string };
let addresses = 0;
/** A fresh address for each case (TRUST_PROXY=1), so no case spends another's budget. */
const address = () => `198.51.${(++addresses >> 8) & 255}.${addresses & 255}`;
let fingerprint: () => Promise<Fingerprint>;

beforeAll(async () => {
  // The probe (one lookup a second of an unknown member token past the budget) once an hour, so the
  // flood's count of lookups is exact.
  // A treasury on each chain, so a deposit reaches its state checks (without, 501 NOT_CONFIGURED).
  s = await startTestServer({
    ...operatorEnv(),
    RATE_LIMITS: 'on',
    TRUST_PROXY: '1',
    RATE_LIMIT_POLICY: 'bad_token_probe=1/3600',
    TREASURY_ETH_ADDRESS: '0x1111111111111111111111111111111111111111',
    TREASURY_BTC_ADDRESS: 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080',
    // Verifier peers on a closed port: reported deposits stay unverified.
    ETH_RPC_URL: 'http://127.0.0.1:9',
    BTC_ESPLORA_URL: 'http://127.0.0.1:9',
  });
  consoleSession = await signIn(s);
  // The MCP tools' arguments as the server publishes them (tools/list): samples come from there.
  const listed = await fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
  });
  const tools = ((await listed.json()) as { result: { tools: { name: string; inputSchema: Json }[] } }).result.tools;
  for (const t of targets.filter((x) => x.door === 'mcp')) t.inputSchema = tools.find((x) => x.name === t.name)?.inputSchema as Json;
  fingerprint = fingerprinter(s);
}, 120_000);
afterAll(async () => {
  await s?.close();
});

const settle = () => settled(s);

/** A token in a member token's form that names nobody: looked up, not refused on sight. */
const wrongMember = () => `cmn_${randomBytes(32).toString('base64url')}`;

interface Row {
  case: CaseName;
  code: string;
  written: string[];
  ready: boolean;
}

/** One case's last request: its outcome, what it wrote, and whether the node is still ready. */
async function observe(c: CaseName, run: () => Promise<Outcome>): Promise<Row & { outcome: Outcome }> {
  await settle();
  const before = await fingerprint();
  const outcome = await run();
  await settle();
  const written = changedTables(before, await fingerprint());
  const ready = (await fetch(`${s.url}/readyz`)).status === 200;
  return { case: c, code: outcome.code, written, ready, outcome };
}

/** The caller a target's requests carry: the operator, nobody (registration and recovery), or a
 * member registered for it from an address of its own. */
async function callerFor(t: Target): Promise<{ token: string | null }> {
  if (t.route.auth === 'operator') return { token: OPERATOR_TOKEN };
  if (t.route.issuesGuest === false || classOf(t.route) === 'recover') return { token: null };
  const m = await register(s, 'Door Member', {}, { 'x-forwarded-for': address() });
  return { token: m.api_token };
}

/** The request that spends a target's budget over REST: its own route (or the first member write
 * of its class with a body) with a body no schema takes, refused, but counted. */
function spender(t: Target) {
  const cls = classOf(t.route);
  if (t.route.body && t.door !== 'console') return t.route;
  const r = doorTargets().find((x) => x.door === 'rest' && x.route.body && x.route.auth === 'member' && classOf(x.route) === cls);
  if (!r) throw new Error(`no write of class ${cls} to spend its budget with`);
  return r.route;
}

/** Answers that differ by design, per operation, on every door (docs/security.md "Every door"). */
const BY_DESIGN: Record<string, Partial<Record<CaseName, string>>> = {
  // The first rotation ended the token the repeat presents: a stored answer (the new token) is not
  // handed to a token that is no longer valid, or a thief holding the old token and a replayed
  // request would get the new one. A client that lost the answer recovers with its key pair.
  'POST /api/v1/ai/token/rotate': { repeat_same: 'UNAUTHORIZED after ok' },
};

const expected = (t: Target, c: CaseName): string => {
  const byDesign = BY_DESIGN[`${t.route.method} ${t.route.path}`]?.[c];
  if (byDesign) return byDesign;
  if (c === 'bad_utf8' && t.door === 'stream-json') return 'closed';
  return {
    bad_utf8: 'VALIDATION_FAILED',
    proto_key: 'INVALID_JSON',
    too_deep: 'INVALID_JSON',
    unknown_field: 'VALIDATION_FAILED',
    bad_token: 'UNAUTHORIZED',
    spent_budget: 'RATE_LIMITED',
    repeat_same: 'the first answer',
    repeat_other: 'IDEMPOTENCY_MISMATCH',
    stale_token: 'UNAUTHORIZED',
    repeat_stale: 'UNAUTHORIZED',
  }[c];
};

/** The cases a door carries for a target (see the head of this file). */
function casesOf(t: Target): CaseName[] {
  const out: CaseName[] = [];
  const takesValue = t.flat || t.route.body !== undefined;
  if (takesValue) out.push('bad_utf8', 'proto_key');
  if (takesValue && t.door !== 'console') out.push('too_deep');
  if (takesValue) out.push('unknown_field');
  out.push('bad_token');
  if (t.route.auth !== 'operator' && t.door !== 'console') out.push('spent_budget');
  if (t.door !== 'console') out.push('repeat_same', 'repeat_other');
  if (takesMember(t)) out.push('stale_token', 'repeat_stale');
  return out;
}

/** A target whose caller is a member (callerFor), on a door that takes a member token. */
const takesMember = (t: Target): boolean =>
  t.door !== 'console' && t.route.auth !== 'operator' && t.route.issuesGuest !== false && classOf(t.route) !== 'recover';

/** A second schema-valid request that differs from the first (another seed), or null when the
 * operation takes nothing that can differ. */
function another(t: Target, first: { params: Record<string, string>; body: Json | undefined }) {
  const a = JSON.stringify(flatArgs(t, first.params, first.body)) + JSON.stringify(first.params);
  for (let seed = 2; seed < 12; seed++) {
    const next = sample(t, seed);
    if (JSON.stringify(flatArgs(t, next.params, next.body)) + JSON.stringify(next.params) !== a) return next;
  }
  return null;
}

/** A case's row as one line: `case: code`, then what it wrote and whether the node was not ready. */
const line = (r: Row): string =>
  `${r.case}: ${r.code}${r.written.length ? ` (wrote ${r.written.join(', ')})` : ''}${r.ready ? '' : ' (not ready)'}`;

async function runTarget(t: Target): Promise<{ got: string[]; want: string[] }> {
  const { token } = await callerFor(t);
  const valid = sample(t, 1);
  const base = flatArgs(t, valid.params, valid.body);
  const req = (over: Partial<Send> = {}): Send => ({
    params: valid.params,
    value: base,
    token,
    address: address(),
    ...(t.door === 'console' ? { console: consoleSession } : {}),
    ...over,
  });
  const got: string[] = [];
  const want: string[] = [];
  const add = (r: Row & { outcome: Outcome }, expect: string, code = r.code) => {
    got.push(line({ case: r.case, code, written: r.written, ready: r.ready }));
    want.push(line({ case: r.case, code: expect, written: [], ready: true }));
  };
  for (const c of casesOf(t)) {
    const e = expected(t, c);
    switch (c) {
      case 'bad_utf8': {
        const r = await observe(c, () => send(s, t, req({ value: withMark(base), spoil: true })));
        // A JSON text frame that is not UTF-8 ends the session: 1007 where the server sees it, 1006
        // where uWebSockets.js 20.30 (the Node 20 fallback) drops it first.
        add(r, e, t.door === 'stream-json' && /^closed 100[67]$/.test(r.code) ? 'closed' : r.code);
        break;
      }
      case 'proto_key':
        add(await observe(c, () => send(s, t, req({ value: withProto(base) }))), e);
        break;
      case 'too_deep':
        add(await observe(c, () => send(s, t, req({ value: { ...base, x_deep: nested(40) } }))), e);
        break;
      case 'unknown_field':
        add(await observe(c, () => send(s, t, req({ value: { ...base, x_unknown: 'x' } }))), e);
        break;
      case 'bad_token': {
        if (t.door === 'console') {
          const forged = { cookie: `commons_operator=${randomBytes(32).toString('base64url')}`, csrf: consoleSession.csrf };
          add(await observe(c, () => send(s, t, req({ console: forged }))), e);
        } else add(await observe(c, () => send(s, t, req({ token: wrongMember() }))), e);
        break;
      }
      case 'spent_budget': {
        const who = await callerFor(t);
        const at = address();
        const sp = spender(t);
        const spend = { params: sample({ route: sp }, 1).params, token: who.token, address: at, value: { x_unknown: 'x' } };
        const restOf = (r: typeof sp): Target => ({ door: 'rest', route: r, name: `${r.method} ${pathOf(r, spend.params)}`, flat: false });
        let spent = '';
        for (let i = 0; i < 100 && spent !== 'RATE_LIMITED'; i++) spent = (await send(s, restOf(sp), spend)).code;
        expect(spent, `${t.door} ${t.name}: spending its budget over REST`).toBe('RATE_LIMITED');
        add(await observe(c, () => send(s, t, req({ token: who.token, address: at }))), e);
        break;
      }
      case 'repeat_same': {
        const key = randomUUID();
        const at = address();
        const first = await send(s, t, req({ key, address: at }));
        const r = await observe(c, () => send(s, t, req({ key, address: at })));
        const same = r.code === first.code && JSON.stringify(r.outcome.answer) === JSON.stringify(first.answer);
        // The first request is schema-valid: a refusal of its shape is a rule its schema does not publish.
        const shape = ['VALIDATION_FAILED', 'INVALID_JSON'].includes(first.code)
          ? ` (the valid sample refused: ${JSON.stringify(first.answer)})`
          : '';
        add(r, e, same && !shape ? 'the first answer' : `${r.code} after ${first.code}${shape}`);
        break;
      }
      case 'repeat_other': {
        const other = another(t, valid);
        if (!other) break;
        const key = randomUUID();
        const at = address();
        await send(s, t, req({ key, address: at }));
        const r = await observe(c, () =>
          send(s, t, req({ key, address: at, params: other.params, value: flatArgs(t, other.params, other.body) })),
        );
        add(r, e, r.code === 'VALIDATION_FAILED' ? `${r.code} ${JSON.stringify(r.outcome.answer)}` : r.code);
        break;
      }
      case 'stale_token':
      case 'repeat_stale': {
        const who = (await callerFor(t)).token as string;
        const at = address();
        const key = randomUUID();
        vi.useFakeTimers({ toFake: ['Date'] });
        try {
          const first = c === 'repeat_stale' ? (await send(s, t, req({ key, address: at, token: who }))).code : null;
          await staleUnderNode(s, who);
          const r = await observe(c, () => send(s, t, req({ token: who, address: at, ...(first ? { key } : {}) })));
          add(r, e, first && r.code !== e ? `${r.code} after ${first}` : r.code);
        } finally {
          vi.useRealTimers();
        }
        break;
      }
    }
  }
  return { got, want };
}

describe.each(['rest', 'stream-json', 'stream-msgpack', 'mcp', 'a2a', 'console'] as const)('door %s', (door) => {
  const mine = targets.filter((t) => t.door === door);
  it('carries writes from the tables', () => {
    expect(mine.length).toBeGreaterThan(0);
  });
  it.each(mine.map((t) => [t.name, t] as const))(
    '%s: every case answered alike, nothing written, still ready',
    async (_name, t) => {
      const { got, want } = await runTarget(t);
      const differ = got.filter((g, i) => g !== want[i]).map((g) => `got ${g}; want ${want[got.indexOf(g)]}`);
      expect(got, differ.join('\n')).toEqual(want);
    },
    120_000,
  );
});

// The bad-token budget is taken before the lookup (DECISIONS.md "Every door, the same rules"): 100
// wrong tokens sent at once from one address get at most the budget's lookups (20, bad_token_ip)
// plus the members' probe, each answered UNAUTHORIZED, the rest RATE_LIMITED; on every door that
// takes a token (the console's: its sign-in form).
describe.each(['rest', 'stream-json', 'stream-msgpack', 'mcp', 'a2a', 'console'] as const)('door %s, 100 wrong tokens at once', (door) => {
  it('at most 21 lookups (UNAUTHORIZED), the rest RATE_LIMITED, nothing written', async () => {
    // Chat, which every door but the console carries (a valid request: only the token is wrong).
    const t = door === 'console' ? consoleSignIn() : (targets.find((x) => x.door === door && x.route.path === '/api/v1/chat') as Target);
    const at = address();
    const valid = door === 'console' ? { params: {}, body: undefined } : sample(t, 1);
    await settle();
    const before = await fingerprint();
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, () => {
        const wrong = wrongMember();
        return door === 'console'
          ? send(s, t, { params: {}, value: { token: wrong }, address: at })
          : send(s, t, { params: valid.params, value: flatArgs(t, valid.params, valid.body), token: wrong, address: at });
      }),
    );
    await settle();
    const counts: Record<string, number> = {};
    for (const o of outcomes) counts[o.code] = (counts[o.code] ?? 0) + 1;
    const looked = counts.UNAUTHORIZED ?? 0;
    expect({ looked: looked <= 21 && looked >= 1, rest: (counts.RATE_LIMITED ?? 0) === 100 - looked }, JSON.stringify(counts)).toEqual({
      looked: true,
      rest: true,
    });
    expect(changedTables(before, await fingerprint())).toEqual([]);
    expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
  }, 120_000);
});
