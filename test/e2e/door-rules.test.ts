// Every door, the same rules (DECISIONS.md "Every door, the same rules", "Idempotent writes"): a
// keyed stream op runs in the keyed write's transaction (one frame never wedges the embedded
// store), and every write from every door, keyed or not, spends the caller's one write budget,
// the session's op budget on top. One server for the file, limits on (write=5/60 so a budget is
// spent in a few writes), each case from its own address. Both backends.
//
// Also: a failed credential check's cost is taken before its lookup, so wrong tokens sent at once
// from one address get the budget's lookups (20, plus the members' probe) on every door that takes
// a token, and the operator still signs in to the console from that address.
import { randomBytes, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { pack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_TOKEN, operatorEnv } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { busEnv, StreamClient } from '../helpers/stream.js';

const WRITES = 5;
let s: TestServer;
const clients: StreamClient[] = [];
let addresses = 0;
/** A fresh address (TRUST_PROXY=1), so no case spends another's budget. */
const address = () => ({ 'x-forwarded-for': `203.0.113.${++addresses}` });

beforeAll(async () => {
  s = await startTestServer({
    ...busEnv(),
    ...operatorEnv(),
    RATE_LIMITS: 'on',
    TRUST_PROXY: '1',
    // The probe (one lookup a second of an unknown member token over budget) once an hour: exact counts.
    RATE_LIMIT_POLICY: `write=${WRITES}/60,bad_token_probe=1/3600`,
  });
});
afterAll(async () => {
  for (const c of clients) c.close();
  await s.close();
});

async function member(name: string) {
  const headers = address();
  const a = await register(s, name, {}, headers);
  const c = await StreamClient.open(s.url, { token: a.api_token, headers });
  clients.push(c);
  return { ...a, headers, c };
}

const keyRows = async () => (await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM idempotency_keys`)[0]?.n ?? 0;

describe('keyed stream ops', () => {
  it('a keyed heartbeat is acknowledged, replayed for its key, and the node keeps answering', async () => {
    const m = await member('Keyed Beat');
    const first = await m.c.request('heartbeat', { idempotency_key: 'k-1' }, 3000);
    expect(first).toMatchObject({ op: 'ack', data: { state: 'resident', became_resident: true } });
    const again = await m.c.request('heartbeat', { idempotency_key: 'k-1' }, 3000);
    expect(again).toMatchObject({ op: 'ack', data: first.data });
    const other = await m.c.request('heartbeat', { idempotency_key: 'k-1', status_note: 'other' }, 3000);
    expect(other).toMatchObject({ op: 'error', error: { code: 'IDEMPOTENCY_MISMATCH' } });
    expect((await s.call('GET', '/readyz')).status).toBe(200);
    // The same over MessagePack, and a keyed chat after it: the store is not held.
    const mp = await StreamClient.open(s.url, { token: m.api_token, headers: m.headers, msgpack: true });
    clients.push(mp);
    expect(await mp.request('heartbeat', { idempotency_key: 'k-2' }, 3000)).toMatchObject({ op: 'ack' });
    expect(await m.c.request('chat', { body: 'still answering', idempotency_key: 'k-3' }, 3000)).toMatchObject({ op: 'ack' });
  });
});

describe('one write budget', () => {
  it('keyed and unkeyed stream heartbeats spend the write budget REST spends: refused past it, nothing kept', async () => {
    const m = await member('Budgeted');
    const rest = await s.call('POST', '/api/v1/habitat/heartbeat', { token: m.api_token, headers: m.headers, body: {} });
    expect(rest.status, rest.text).toBe(200);
    const before = await keyRows();
    const answers: string[] = [];
    for (let i = 1; i < WRITES + 2; i++) {
      const fields = i % 2 === 0 ? { idempotency_key: randomUUID() } : {};
      const a = await m.c.request('heartbeat', fields);
      answers.push(a.op === 'ack' ? 'ack' : a.error.code);
    }
    expect(answers).toEqual([...Array(WRITES - 1).fill('ack'), 'RATE_LIMITED', 'RATE_LIMITED']);
    // Two of the four acknowledged heartbeats were keyed (i = 2, 4); the refused keyed one kept nothing.
    expect((await keyRows()) - before).toBe(2);
    const after = await s.call('POST', '/api/v1/habitat/heartbeat', { token: m.api_token, headers: m.headers, body: {} });
    expect(after.status).toBe(429);
    expect(after.json.error.code).toBe('RATE_LIMITED');
  });
});

const chatRows = async () => (await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM chat_messages`)[0]?.n ?? 0;
/** `text` as UTF-8 with the bytes of `mark` (ASCII) replaced by 0xFF, which no UTF-8 holds. */
const spoiled = (bytes: Uint8Array, mark = 'ZZZZ'): Buffer => {
  const b = Buffer.from(bytes);
  const at = b.indexOf(mark);
  if (at < 0) throw new Error('mark not found');
  b[at + 1] = 0xff;
  return b;
};
const deep = (n: number): string => `${'['.repeat(n)}${']'.repeat(n)}`;

/** A POST of `{}` with header values sent byte for byte; the whole answer as text. */
function rawPost(path: string, headers: Record<string, string | Buffer>): Promise<string> {
  const head = [`POST ${path} HTTP/1.1`, 'host: 127.0.0.1', 'content-type: application/json', 'content-length: 2', 'connection: close'];
  const lines = [
    ...head.map((l) => Buffer.from(l)),
    ...Object.entries(headers).map(([k, v]) => Buffer.concat([Buffer.from(`${k}: `), Buffer.from(v)])),
  ];
  const payload = Buffer.concat([...lines.flatMap((l) => [l, Buffer.from('\r\n')]), Buffer.from('\r\n{}')]);
  return new Promise((ok, ko) => {
    const sock = connect(Number(new URL(s.url).port), '127.0.0.1', () => sock.write(payload));
    const got: Buffer[] = [];
    sock.on('data', (d) => got.push(d));
    sock.on('close', () => ok(Buffer.concat(got).toString('utf8')));
    sock.on('error', ko);
  });
}

async function mcp(raw: Buffer | string) {
  const res = await fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...address() },
    body: raw,
  });
  // biome-ignore lint/suspicious/noExplicitAny: arbitrary JSON-RPC answers.
  return { status: res.status, json: (await res.json()) as any };
}
const toolCall = (args: string) => `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"post_chat","arguments":${args}}}`;
/** The tool error's code from a tools/call answer. */
const toolCode = (a: Awaited<ReturnType<typeof mcp>>) =>
  a.json.result?.isError ? JSON.parse(a.json.result.content[0].text).error.code : null;

async function a2a(raw: Buffer | string) {
  const res = await fetch(`${s.url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...address() },
    body: raw,
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) };
}
const sendData = (data: string) =>
  `{"jsonrpc":"2.0","id":9,"method":"SendMessage","params":{"message":{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":[{"data":${data}}]}}}`;

describe('one decoding on every door', () => {
  it('the stream: a MessagePack str that is not UTF-8 and a __proto__ key are refused; a JSON text frame that is not UTF-8 closes the session', async () => {
    const before = await chatRows();
    const mp = await StreamClient.open(s.url, { msgpack: true, headers: address() });
    clients.push(mp);
    mp.ws.send(spoiled(pack({ op: 'chat', ref: 'u', body: 'ZZZZ words' })));
    expect((await mp.next((f) => f.op === 'error')).error).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ path: 'frame' }] });
    mp.ws.send(pack({ op: 'chat', ref: 'p', body: 'words', ...JSON.parse('{"__proto__":{"x":1}}') }));
    expect((await mp.next((f) => f.op === 'error')).error.code).toBe('INVALID_JSON');
    mp.ws.send(pack(JSON.parse(`{"op":"chat","ref":"d","body":"words","name":${deep(40)}}`)));
    expect((await mp.next((f) => f.op === 'error')).error.code).toBe('INVALID_JSON');
    // The session goes on after a refusal.
    expect(await mp.request('ping')).toMatchObject({ op: 'pong' });
    const js = await StreamClient.open(s.url, { headers: address() });
    clients.push(js);
    js.ws.send(spoiled(Buffer.from(JSON.stringify({ op: 'chat', ref: 't', body: 'ZZZZ words' }))), { binary: false });
    // uWS checks text frames itself and drops the connection (1006) before the frame reaches us
    // (uWebSockets.js 20.30, the Node 20 fallback); where it hands the frame on, the server closes
    // 1007 after an error frame (src/transport/ws/stream.ts).
    expect([1006, 1007]).toContain((await js.closed).code);
    expect(await chatRows()).toBe(before);
  });

  it('MCP: tool arguments that are not UTF-8, or carry __proto__ or constructor keys, or nest past 32, are tool errors', async () => {
    const before = await chatRows();
    expect(toolCode(await mcp(spoiled(Buffer.from(toolCall('{"body":"ZZZZ words"}')))))).toBe('VALIDATION_FAILED');
    expect(toolCode(await mcp(toolCall('{"body":"words","__proto__":{"x":1}}')))).toBe('INVALID_JSON');
    expect(toolCode(await mcp(toolCall('{"body":"words","name":{"constructor":{"prototype":{}}}}')))).toBe('INVALID_JSON');
    expect(toolCode(await mcp(toolCall(`{"body":"words","name":${deep(33)}}`)))).toBe('INVALID_JSON');
    // Not a tool call at all: a JSON-RPC error with our code in its data.
    const other = await mcp(spoiled(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ZZZZ"}')));
    expect(other.status).toBe(200);
    expect(other.json.error.data.code).toBe('VALIDATION_FAILED');
    expect(await chatRows()).toBe(before);
  });

  it('A2A: data parts that are not UTF-8, carry __proto__, or nest past 32 (or 30,000) are refused with our code; no input answers 500', async () => {
    const before = await chatRows();
    const bad = await a2a(spoiled(Buffer.from(sendData('{"skill":"post_chat","body":"ZZZZ words"}'))));
    expect(bad.json.error).toMatchObject({ code: -32602, data: { code: 'VALIDATION_FAILED' } });
    const proto = await a2a(sendData('{"skill":"post_chat","body":"words","__proto__":{"x":1}}'));
    expect(proto.json.error).toMatchObject({ code: -32700, data: { code: 'INVALID_JSON' } });
    const nested = await a2a(sendData(`{"skill":"post_chat","body":"words","name":${deep(33)}}`));
    expect(nested.json.result.message.parts[0].data.error.code).toBe('INVALID_JSON');
    const deepest = await a2a(sendData(`{"skill":"post_chat","body":"words","name":${deep(30_000)}}`));
    expect(deepest.json.error).toMatchObject({ code: -32700, data: { code: 'INVALID_JSON' } });
    expect(deepest.text).not.toContain('stack');
    const odd = [
      '[]',
      'null',
      '1',
      '"x"',
      '{}',
      '{"jsonrpc":"2.0","id":{},"method":"SendMessage"}',
      '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":null}',
      '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":null}}',
      '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":"x"}}}',
      '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[null]}}}',
      '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":null}]}}}',
      '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":[1,2]}]}}}',
      '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":5}]}}}',
      '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","data":"x"}]}}}',
      '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":1,"role":"user","parts":[{"kind":"file"}]}}}',
      '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":{}}}',
      '{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":null}}',
    ];
    const statuses = await Promise.all(odd.map(async (raw) => (await a2a(raw)).status));
    expect(statuses.filter((x) => x >= 500)).toEqual([]);
    expect(await chatRows()).toBe(before);
  });
});

/** The default bad_token_ip budget; member tokens get one probe lookup besides (once an hour here). */
const BUDGET = 20;
const wrongMember = () => `cmn_${randomBytes(32).toString('base64url')}`;
const tally = (xs: (number | string)[]) => {
  const t: Record<string, number> = {};
  for (const x of xs) t[x] = (t[x] ?? 0) + 1;
  return t;
};

describe('the bad-token budget, taken before the lookup', () => {
  const N = 100;
  const many = <T>(f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: N }, (_, i) => f(i)));

  it('100 wrong tokens at once from one address: the budget of lookups on REST, /metrics and the stream; the rest 429', async () => {
    let h = address();
    const me = await many(async () => (await s.call('GET', '/api/v1/ai/me', { token: wrongMember(), headers: h })).status);
    expect(tally(me)).toEqual({ 401: BUDGET + 1, 429: N - BUDGET - 1 });
    h = address();
    const metrics = await many(async (i) => (await s.call('GET', '/metrics', { token: `guess-${i}`, headers: h })).status);
    expect(tally(metrics)).toEqual({ 401: BUDGET, 429: N - BUDGET });
    // Stream auth ops in one session (its op budget lets 60 through at once).
    const c = await StreamClient.open(s.url, { headers: address() });
    clients.push(c);
    const ops = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const a = await c.request('auth', { token: wrongMember() });
        return a.op === 'ack' ? 'ack' : a.error.code;
      }),
    );
    expect(tally(ops)).toEqual({ UNAUTHORIZED: BUDGET + 1, RATE_LIMITED: 50 - BUDGET - 1 });
  });

  it("the console's sign-in compares at most the budget; the operator's own token still signs in from that address", async () => {
    let h = address();
    const signIn = (token: string) =>
      fetch(`${s.url}/operator/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(s.url).origin, ...h },
        body: new URLSearchParams({ token }).toString(),
        redirect: 'manual',
      });
    const statuses = await many(async (i) => (await signIn(`guess-${i}`)).status);
    expect(tally(statuses)).toEqual({ 401: BUDGET, 429: N - BUDGET });
    // 21 wrong member tokens from the operator's address spend its bad-token budget, not the
    // operator's way in (its token is a known credential).
    h = address();
    await Promise.all(Array.from({ length: 21 }, () => s.call('GET', '/api/v1/ai/me', { token: wrongMember(), headers: h })));
    expect((await signIn(OPERATOR_TOKEN)).status).toBe(303);
  });
});

describe('one spelling of a token, visible ASCII keys', () => {
  const guestRows = async () => (await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM guest_claims`)[0]?.n ?? 0;

  it('a provisional guest token with padding or a stray character is an unknown token: 401, no guest number claimed', async () => {
    const h = address();
    const read = await s.call('GET', '/api/v1/chat', { headers: h });
    const token = read.headers.get('x-commons-guest-token') as string;
    expect(token).toMatch(/^cmg_/);
    const [chats, claims] = [await chatRows(), await guestRows()];
    const middle = Math.floor(token.length / 2);
    for (const spelling of [`${token}=`, `${token}==`, `${token.slice(0, middle)}.${token.slice(middle)}`, `${token}!`]) {
      const r = await s.call('POST', '/api/v1/chat', { token: spelling, headers: h, body: { body: 'another spelling' } });
      expect([r.status, r.json?.error?.code], spelling).toEqual([401, 'UNAUTHORIZED']);
    }
    expect([await chatRows(), await guestRows()]).toEqual([chats, claims]);
    // The token as issued still writes, as the read's guest.
    const ok = await s.call('POST', '/api/v1/chat', { token, headers: h, body: { body: 'the one spelling' } });
    expect(ok.json.data.guest).toBe(read.headers.get('x-commons-guest'));
  });

  it('an Idempotency-Key with a byte outside visible ASCII is refused 400 naming the header, never cut short', async () => {
    const m = await member('Keyed Bytes');
    const before = await keyRows();
    // "k", 0xE9 (Latin-1 é, not UTF-8) and "x"; "k", the UTF-8 é and "x": sent byte for byte. (Such
    // bytes at the very end of a value never reach us: uWebSockets.js trims them as whitespace.)
    for (const bytes of [
      [0xe9, 0x78],
      [0xc3, 0xa9, 0x78],
    ]) {
      const answer = await rawPost('/api/v1/habitat/heartbeat', {
        authorization: `Bearer ${m.api_token}`,
        'idempotency-key': Buffer.from([0x6b, ...bytes]),
        ...m.headers,
      });
      const json = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      expect([answer.slice(9, 12), json.error?.code, json.error?.fields?.[0]?.path], answer).toEqual([
        '400',
        'VALIDATION_FAILED',
        'Idempotency-Key',
      ]);
    }
    expect(await keyRows()).toBe(before);
  });
});
