// Bytes to a value, the same for every door (DECISIONS.md "Every door, the same rules"): REST and
// console bodies, the stream's JSON and MessagePack frames, MCP requests and their tool arguments,
// A2A requests and their data parts. Text must be UTF-8 (refused VALIDATION_FAILED naming where,
// never read as U+FFFD), nesting at most 32 levels, and no `__proto__`, `constructor` or
// `prototype` key (INVALID_JSON). Nothing here recurses, so no input can exhaust the stack.
import { isUtf8 } from 'node:buffer';
import { Unpackr } from 'msgpackr';
import sjson from 'secure-json-parse';
import { CommonsError } from '../../domain/errors.js';
import { BODY_MAX_BYTES } from '../../domain/limits.js';

export const MAX_DEPTH = 32;
/** A protocol's envelope (JSON-RPC, its params, a message, its parts) around a value that must
 * itself hold to MAX_DEPTH: checked again where the value is taken out (checkValue). */
export const ENVELOPE_DEPTH = MAX_DEPTH + 16;

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function notUtf8(where: string): CommonsError {
  return new CommonsError('VALIDATION_FAILED', `${where} is not valid UTF-8`, {
    fields: [{ path: where, message: 'bytes that are not valid UTF-8' }],
  });
}

const tooDeep = (where: string, max: number) => new CommonsError('INVALID_JSON', `${where}: nesting deeper than ${max} levels`);
const forbiddenKey = (where: string, key: string) =>
  new CommonsError('INVALID_JSON', `${where} carries a "${key}" key, which is not accepted anywhere`);

/** JSON text as bytes (a body, a text frame, a protocol request). */
export function decodeJson(bytes: Uint8Array, where: string, maxDepth = MAX_DEPTH): unknown {
  if (!isUtf8(bytes)) throw notUtf8(where);
  return parseJson(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'), where, maxDepth);
}

/** What a refused JSON-RPC request said of itself (its id and method), read leniently: only to
 * give the refusal the shape its caller expects (an MCP tools/call gets a tool error). Never a
 * value to act on: the request itself was refused by decodeJson. */
export interface RpcEnvelope {
  id: string | number | null;
  method: unknown;
}

export function refusedEnvelope(bytes: Uint8Array): RpcEnvelope {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    return { id: null, method: undefined };
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return { id: null, method: undefined };
  const { id, method } = v as { id?: unknown; method?: unknown };
  return { id: typeof id === 'string' || typeof id === 'number' ? id : null, method };
}

/** JSON text already known to be UTF-8. */
export function parseJson(text: string, where: string, maxDepth = MAX_DEPTH): unknown {
  let value: unknown;
  try {
    value = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw new CommonsError('INVALID_JSON', `${where} is not valid JSON (or carries __proto__/constructor keys)`);
  }
  checkValue(value, where, maxDepth);
  return value;
}

/** A decoded value taken out of an envelope (MCP tool arguments, an A2A data part): the same
 * depth and key rules as a body. */
export function checkValue(value: unknown, where: string, maxDepth = MAX_DEPTH): void {
  const stack: [unknown, number][] = [[value, 0]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [v, d] = top;
    if (v === null || typeof v !== 'object') continue;
    if (d + 1 > maxDepth) throw tooDeep(where, maxDepth);
    if (Array.isArray(v)) {
      for (const x of v) stack.push([x, d + 1]);
      continue;
    }
    for (const k of Object.keys(v)) {
      if (FORBIDDEN_KEYS.has(k)) throw forbiddenKey(where, k);
      stack.push([(v as Record<string, unknown>)[k], d + 1]);
    }
  }
}

const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

/** A MessagePack value (a binary stream frame): every str is UTF-8, checked on its bytes (the
 * decoder would put U+FFFD in their place), maps and arrays at most 32 deep, no forbidden key. */
export function decodeMsgpack(bytes: Uint8Array, where: string): unknown {
  scanMsgpack(bytes, where);
  try {
    return unpackr.unpack(bytes);
  } catch {
    throw invalidPack(where);
  }
}

const invalidPack = (where: string) => new CommonsError('INVALID_JSON', `${where} is not valid MessagePack`);
const KEY_BYTES = [...FORBIDDEN_KEYS].map((k) => Buffer.from(k));

/** Walks the encoding without building values: string bytes, nesting, map keys, the length. */
function scanMsgpack(b: Uint8Array, where: string): void {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  // Each open map or array: how many values it still holds (a map's keys and values both count).
  const open: { left: number; map: boolean }[] = [];
  let pos = 0;
  const len = (n: 1 | 2 | 4): number => {
    if (pos + n > b.length) throw invalidPack(where);
    const v = n === 1 ? view.getUint8(pos) : n === 2 ? view.getUint16(pos) : view.getUint32(pos);
    pos += n;
    return v;
  };
  for (;;) {
    const parent = open[open.length - 1];
    const isKey = parent?.map === true && parent.left % 2 === 0;
    if (parent) parent.left--;
    if (pos >= b.length) throw invalidPack(where);
    const t = b[pos++] as number;
    let str = -1;
    let skip = 0;
    let items = -1;
    let map = false;
    if (t <= 0x7f || t >= 0xe0 || (t >= 0xc0 && t <= 0xc3)) skip = 0;
    else if (t <= 0x8f) [items, map] = [(t & 0x0f) * 2, true];
    else if (t <= 0x9f) items = t & 0x0f;
    else if (t <= 0xbf) str = t & 0x1f;
    else if (t === 0xd9 || t === 0xda || t === 0xdb) str = len(t === 0xd9 ? 1 : t === 0xda ? 2 : 4);
    else if (t === 0xdc || t === 0xdd) items = len(t === 0xdc ? 2 : 4);
    else if (t === 0xde || t === 0xdf) [items, map] = [len(t === 0xde ? 2 : 4) * 2, true];
    else if (t === 0xc4 || t === 0xc5 || t === 0xc6) skip = len(t === 0xc4 ? 1 : t === 0xc5 ? 2 : 4);
    else if (t === 0xc7 || t === 0xc8 || t === 0xc9) skip = len(t === 0xc7 ? 1 : t === 0xc8 ? 2 : 4) + 1;
    else if (t >= 0xd4 && t <= 0xd8) skip = 1 + 2 ** (t - 0xd4);
    else if (t === 0xca || t === 0xcb) skip = t === 0xca ? 4 : 8;
    else if (t >= 0xcc && t <= 0xd3) skip = 2 ** ((t - 0xcc) % 4);
    else throw invalidPack(where);
    if (str >= 0) {
      if (pos + str > b.length) throw invalidPack(where);
      const bytes = b.subarray(pos, pos + str);
      if (!isUtf8(bytes)) throw notUtf8(where);
      if (isKey) {
        const k = KEY_BYTES.find((x) => x.equals(bytes));
        if (k) throw forbiddenKey(where, k.toString());
      }
      pos += str;
    }
    pos += skip;
    if (pos > b.length) throw invalidPack(where);
    if (items >= 0 && open.length + 1 > MAX_DEPTH) throw tooDeep(where, MAX_DEPTH);
    if (items > 0) {
      open.push({ left: items, map });
      continue;
    }
    while (open.length > 0 && (open[open.length - 1] as { left: number }).left === 0) open.pop();
    if (open.length === 0) break;
  }
  if (pos !== b.length) throw invalidPack(where);
}

/** A request body (REST, the console's forms): at most BODY_MAX_BYTES, JSON (or no Content-Type,
 * read as JSON for minimal clients) or, on a form route, an HTML form's fields. */
export function decodeBody(body: Buffer | null | undefined, contentType: string | undefined, form = false): unknown {
  if (body && body.length > BODY_MAX_BYTES) {
    throw new CommonsError('PAYLOAD_TOO_LARGE', `request bodies are at most ${BODY_MAX_BYTES} bytes`);
  }
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  // An HTML form's fields, as strings (the operator console); such routes take nothing else.
  if (form) {
    if (type !== 'application/x-www-form-urlencoded') {
      throw new CommonsError('UNSUPPORTED_MEDIA_TYPE', `bodies must be application/x-www-form-urlencoded, not ${type || 'absent'}`);
    }
    return formFields(body ?? null);
  }
  // No Content-Type at all is read as JSON, for minimal clients (DECISIONS.md).
  if (type !== '' && type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) {
    throw new CommonsError('UNSUPPORTED_MEDIA_TYPE', `bodies must be application/json, not ${type}`);
  }
  if (!body || body.length === 0) return undefined;
  // Bodies are UTF-8 (DECISIONS.md "Contract exactness"): bytes that do not decode are refused,
  // never stored with U+FFFD in their place (lone surrogates are refused by validate.ts); the
  // same decoding as every door's (../admission/decode.ts).
  return decodeJson(body, 'body');
}

/** An HTML form's fields as URLSearchParams reads them (the last of a repeated name wins), but
 * bytes, raw or percent-encoded, that are not UTF-8 are refused rather than read as U+FFFD. */
function formFields(body: Buffer | null): Record<string, string> {
  const refuse = (path: string): never => {
    throw new CommonsError('VALIDATION_FAILED', 'the body is not valid UTF-8', {
      fields: [{ path, message: 'bytes that are not valid UTF-8' }],
    });
  };
  if (body && !isUtf8(body)) refuse('body');
  const fields: Record<string, string> = {};
  for (const pair of (body?.toString('utf8') ?? '').split('&')) {
    if (pair === '') continue;
    const at = pair.indexOf('=');
    const [rawName, rawValue] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    // A `%` not followed by two hex digits stays a literal `%`, as URLSearchParams reads it.
    const decode = (x: string): string => decodeURIComponent(x.replaceAll('+', ' ').replace(/%(?![0-9a-fA-F]{2})/g, '%25'));
    let name = '';
    try {
      name = decode(rawName);
      Object.defineProperty(fields, name, {
        value: decode(rawValue),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } catch {
      refuse(name === '' ? 'body' : `body.${name}`);
    }
  }
  checkValue(fields, 'body');
  return fields;
}
