// NIP-01 client messages for the read-only relay: parsed and bounded before anything is queried.

import { CommonsError } from '../../domain/errors.js';
import type { NostrFilter } from '../../domain/signal.js';
import { decodeJson } from '../admission/decode.js';
import { MAX_FILTERS, MAX_LIMIT } from '../documents/nip11.js';

export type ClientMessage =
  | { type: 'REQ'; subId: string; filters: NostrFilter[] }
  | { type: 'CLOSE'; subId: string }
  | { type: 'EVENT'; id: string }
  | { type: 'INVALID'; reason: string; subId?: string };

const HEX64 = /^[0-9a-f]{64}$/;
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const hexList = (v: unknown): string[] | null =>
  Array.isArray(v) && v.length <= 500 && v.every((x) => typeof x === 'string' && HEX64.test(x)) ? (v as string[]) : null;

export function parseFilter(raw: unknown): NostrFilter | string {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return 'a filter must be an object';
  const f: NostrFilter = { tags: {} };
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (k === 'ids' || k === 'authors') {
      const list = hexList(v);
      if (!list) return `${k} must be a list of 64-character lowercase hex strings`;
      f[k] = list;
    } else if (k === 'kinds') {
      if (!Array.isArray(v) || v.length > 100 || !v.every((x) => isInt(x) && x <= 65535)) return 'kinds must be a list of integers 0-65535';
      f.kinds = v as number[];
    } else if (k === 'since' || k === 'until' || k === 'limit') {
      if (!isInt(v)) return `${k} must be a non-negative integer`;
      f[k] = v;
    } else if (/^#[a-zA-Z]$/.test(k)) {
      if (!Array.isArray(v) || v.length > 100 || !v.every((x) => typeof x === 'string' && x.length <= 1024))
        return `${k} must be a list of strings`;
      (f.tags as Record<string, string[]>)[k.slice(1)] = v as string[];
    } else if (k === 'search') {
      return 'unsupported: search (NIP-50) is not offered';
    }
    // Unknown keys are ignored, as NIP-01 relays do.
  }
  if (f.limit !== undefined) f.limit = Math.min(f.limit, MAX_LIMIT);
  return f;
}

/** A client message's bytes, decoded as every door decodes (../admission/decode.ts: UTF-8, nesting
 * at most 32, no prototype keys), then read as NIP-01's REQ, CLOSE or EVENT. */
export function parseClientMessage(bytes: Uint8Array): ClientMessage {
  let msg: unknown;
  try {
    msg = decodeJson(bytes, 'message');
  } catch (err) {
    return { type: 'INVALID', reason: `invalid: ${err instanceof CommonsError ? err.message : 'not JSON'}` };
  }
  if (!Array.isArray(msg) || typeof msg[0] !== 'string') return { type: 'INVALID', reason: 'invalid: a message is a JSON array' };
  const [type, ...rest] = msg as [string, ...unknown[]];
  if (type === 'EVENT') {
    const ev = rest[0] as { id?: unknown } | undefined;
    return { type: 'EVENT', id: typeof ev?.id === 'string' ? ev.id : '' };
  }
  if (type === 'CLOSE' || type === 'REQ') {
    const subId = rest[0];
    if (typeof subId !== 'string' || subId.length === 0 || subId.length > 64) {
      return { type: 'INVALID', reason: 'invalid: subscription id must be a string of 1-64 characters' };
    }
    if (type === 'CLOSE') return { type, subId };
    const raws = rest.slice(1);
    if (raws.length === 0) return { type: 'INVALID', subId, reason: 'invalid: REQ needs at least one filter' };
    if (raws.length > MAX_FILTERS) return { type: 'INVALID', subId, reason: `invalid: at most ${MAX_FILTERS} filters` };
    const filters: NostrFilter[] = [];
    for (const r of raws) {
      const f = parseFilter(r);
      if (typeof f === 'string') return { type: 'INVALID', subId, reason: `${f.startsWith('unsupported') ? '' : 'invalid: '}${f}` };
      filters.push(f);
    }
    return { type, subId, filters };
  }
  return { type: 'INVALID', reason: `unsupported: ${type.slice(0, 20)}` };
}

/** Does a stored event match a parsed filter? (Live events after EOSE.) */
export function matches(f: NostrFilter, ev: { id: string; pubkey: string; kind: number; created_at: number; tags: string[][] }): boolean {
  if (f.ids && !f.ids.includes(ev.id)) return false;
  if (f.authors && !f.authors.includes(ev.pubkey)) return false;
  if (f.kinds && !f.kinds.includes(ev.kind)) return false;
  if (f.since !== undefined && ev.created_at < f.since) return false;
  if (f.until !== undefined && ev.created_at > f.until) return false;
  for (const [letter, values] of Object.entries(f.tags ?? {})) {
    if (!ev.tags.some((t) => t[0] === letter && t[1] !== undefined && values.includes(t[1]))) return false;
  }
  return true;
}
