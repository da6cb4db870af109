// One request through one door of the service, in the door's own shape (REST, the stream in JSON
// and MessagePack, MCP, A2A, the console's forms), read back as one outcome: the error code, or
// `ok`; and the spoiled values the door matrix sends (test/e2e/door-matrix.test.ts). The doors and
// their targets are test/helpers/doors.ts.
import { randomUUID } from 'node:crypto';
import { pack } from 'msgpackr';
import { pathOf, type Target } from './doors.js';
import type { TestServer } from './server.js';
import { StreamClient } from './stream.js';

type Json = Record<string, unknown>;
// ---- one request, through one door -------------------------------------------------------------

/** What a case sends: a value (or raw bytes) for the door's arguments, with a credential. */
export interface Send {
  params: Record<string, string>;
  /** The body, or the door's arguments (params and body flat, for MCP, A2A and stream ops). */
  value?: Json | undefined;
  /** The value carries MARK (see withMark): one of its bytes becomes 0xFF once the door has
   * encoded the request, so no UTF-8 holds it. */
  spoil?: boolean;
  token?: string | null;
  /** The console's session cookie and CSRF token. */
  console?: { cookie: string; csrf: string };
  key?: string;
  address: string;
}

export interface Outcome {
  code: string;
  /** What came back, to compare a replay with its first answer. */
  answer: unknown;
}

const json = (text: string): Json | null => {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return null;
  }
};

/** The door's arguments: path params and body flat (MCP, A2A, stream ops). */
export const flatArgs = (t: Target, params: Record<string, string>, body: Json | undefined): Json =>
  t.flat ? { ...params, ...(body ?? {}) } : (body ?? {});

export async function send(s: TestServer, t: Target, x: Send): Promise<Outcome> {
  const headers: Record<string, string> = { 'x-forwarded-for': x.address };
  if (x.token) headers.authorization = `Bearer ${x.token}`;
  switch (t.door) {
    case 'rest':
      return rest(s, t, x, headers);
    case 'mcp':
      return mcp(s, t, x, headers);
    case 'a2a':
      return a2a(s, t, x, headers);
    case 'console':
      return consoleForm(s, t, x, headers);
    default:
      return stream(s, t, x, headers);
  }
}

async function rest(s: TestServer, t: Target, x: Send, headers: Record<string, string>): Promise<Outcome> {
  if (x.key) headers['idempotency-key'] = x.key;
  let body: Buffer | undefined;
  if (x.value !== undefined) {
    headers['content-type'] = 'application/json';
    body = encoded(JSON.stringify(x.value), x.spoil);
  }
  const res = await fetch(s.url + pathOf(t.route, x.params), { method: t.route.method, headers, body });
  const j = json(await res.text());
  const err = j?.error as Json | undefined;
  return { code: err ? String(err.code) : res.ok ? 'ok' : `http ${res.status}`, answer: j?.data ?? err };
}

const toolCall = (name: string, args: string) =>
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;

async function mcp(s: TestServer, t: Target, x: Send, headers: Record<string, string>): Promise<Outcome> {
  const args = JSON.stringify({ ...(x.value ?? {}), ...(x.key ? { idempotency_key: x.key } : {}) });
  const bytes = encoded(toolCall(t.name, args), x.spoil);
  const res = await fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: bytes,
  });
  const j = json(await res.text());
  if (!j) return { code: `http ${res.status}`, answer: null };
  const result = j.result as { isError?: boolean; content: { text: string }[]; structuredContent?: unknown } | undefined;
  if (result?.isError) {
    const err = (json(result.content[0]?.text ?? '') as { error: Json } | null)?.error;
    return { code: String(err?.code), answer: err };
  }
  if (result) return { code: 'ok', answer: result.structuredContent };
  const e = (j.error ?? {}) as { data?: Json };
  return { code: String(e.data?.code ?? (res.ok ? 'jsonrpc error' : `http ${res.status}`)), answer: e };
}

const sendMessage = (data: string) =>
  `{"jsonrpc":"2.0","id":9,"method":"SendMessage","params":{"message":{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":[{"data":${data}}]}}}`;

async function a2a(s: TestServer, t: Target, x: Send, headers: Record<string, string>): Promise<Outcome> {
  const data = JSON.stringify({ skill: t.name, ...(x.value ?? {}), ...(x.key ? { idempotency_key: x.key } : {}) });
  const res = await fetch(`${s.url}/a2a`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: encoded(sendMessage(data), x.spoil),
  });
  const j = json(await res.text());
  if (!j) return { code: `http ${res.status}`, answer: null };
  if (j.error) return { code: String(((j.error as Json).data as Json | undefined)?.code ?? 'jsonrpc error'), answer: j.error };
  const part = ((j.result as Json).message as { parts: { data: Json }[] }).parts[0]?.data ?? {};
  const err = part.error as Json | undefined;
  return { code: err ? String(err.code) : 'ok', answer: err ?? part };
}

async function consoleForm(s: TestServer, t: Target, x: Send, headers: Record<string, string>): Promise<Outcome> {
  const c = x.console;
  const fields = new URLSearchParams({ ...(c ? { csrf: c.csrf } : {}) });
  for (const [k, v] of Object.entries(x.value ?? {})) fields.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  const body = encoded(fields.toString(), x.spoil);
  const res = await fetch(s.url + pathOf({ ...t.route, path: t.name }, x.params), {
    method: 'POST',
    headers: {
      ...headers,
      'content-type': 'application/x-www-form-urlencoded',
      origin: new URL(s.url).origin,
      ...(c ? { cookie: c.cookie } : {}),
    },
    body,
    redirect: 'manual',
  });
  const text = await res.text();
  if (res.status === 303) return { code: 'ok', answer: res.headers.get('location') };
  const j = json(text);
  if (j?.error) return { code: String((j.error as Json).code), answer: j.error };
  // The console's refusal page names the code (views-error.ts); its gates answer by status.
  const named = /<span class="num">\(([A-Z_]+)\)<\/span>/.exec(text)?.[1];
  const byStatus: Record<number, string> = { 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 404: 'NOT_FOUND', 429: 'RATE_LIMITED' };
  return { code: named ?? byStatus[res.status] ?? `http ${res.status}`, answer: named ?? res.status };
}

async function stream(s: TestServer, t: Target, x: Send, headers: Record<string, string>): Promise<Outcome> {
  const msgpack = t.door === 'stream-msgpack';
  let c: StreamClient;
  try {
    c = await StreamClient.open(s.url, { msgpack, headers });
  } catch (err) {
    const status = /upgrade refused: (\d+)/.exec(String(err))?.[1];
    const byStatus: Record<string, string> = { '401': 'UNAUTHORIZED', '429': 'RATE_LIMITED' };
    return { code: byStatus[status ?? ''] ?? `upgrade ${status ?? String(err)}`, answer: null };
  }
  try {
    const frame = { op: t.name, ref: 'm', ...(x.value ?? {}), ...(x.key ? { idempotency_key: x.key } : {}) };
    if (x.spoil) c.ws.send(msgpack ? encoded(pack(frame), true) : encoded(JSON.stringify(frame), true), { binary: msgpack });
    else c.send(frame);
    const got: Json = await Promise.race([c.next((f) => f.ref === 'm' || f.op === 'error'), c.closed.then((cl) => ({ op: 'closed', cl }))]);
    if (got.op === 'closed') return { code: `closed ${(got.cl as { code: number }).code}`, answer: null };
    const err = got.error as Json | undefined;
    return got.op === 'error' ? { code: String(err?.code), answer: err } : { code: 'ok', answer: got.data };
  } finally {
    c.close();
  }
}

// ---- spoiled values ---------------------------------------------------------------------------

export const MARK = 'ZZZZ';

/** The value with one extra member holding MARK (the name a field no schema has). */
export const withMark = (value: Json): Json => ({ ...value, [`x${MARK}`]: MARK });

/** The request's bytes; spoiled: the byte after the first MARK becomes 0xFF. MARK is ASCII, so it
 * is there byte for byte in JSON text, a MessagePack str and a form body alike. */
function encoded(text: string | Uint8Array, spoil = false): Buffer {
  const b = Buffer.from(text as string);
  if (!spoil) return b;
  const at = b.indexOf(MARK);
  if (at < 0) throw new Error('spoil: the value carries no MARK');
  b[at + 1] = 0xff;
  return b;
}

/** A value nested `depth` arrays deep. */
export const nested = (depth: number): unknown => {
  let v: unknown = [];
  for (let i = 1; i < depth; i++) v = [v];
  return v;
};

/** The value with an own `__proto__` member (spread defines it; assignment would not). */
export const withProto = (value: Json): Json => ({ ...value, ...(JSON.parse('{"__proto__":{"x":1}}') as Json) });
