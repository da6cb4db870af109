// Member tokens resolved for reads, kept in memory so a read with a token costs what an anonymous
// read costs (no database round trip). Only reads on open routes use it, where a stale token is
// ignored anyway (src/transport/http/auth.ts; there the caller decides only the guest headers);
// writes and member routes always verify against the database, so a revoked or rotated
// token is refused by them at once on every node. A rotation, recovery or revocation also clears
// this node's entries at once and every other node's through the bus; entries older than
// TOKEN_CACHE_MS are looked up again, bounding what any other change of the row could leave stale.

import { hash } from 'node:crypto';
import type { IdentityRow } from '../store/identities.js';
import * as ids from '../store/identities.js';
import type { Ctx } from './ports.js';
import { hashToken } from './tokens.js';

export const TOKENS_TOPIC = 'identity.tokens';
export const TOKEN_CACHE_MS = 2000;
const MAX_ENTRIES = 50_000;

interface Entry {
  member: IdentityRow;
  at: number;
}

const caches = new WeakMap<Ctx, Map<string, Entry>>();

function cacheOf(ctx: Ctx): Map<string, Entry> {
  let c = caches.get(ctx);
  if (!c) {
    const map = new Map<string, Entry>();
    c = map;
    caches.set(ctx, map);
    ctx.bus.subscribe(TOKENS_TOPIC, () => map.clear());
  }
  return c;
}

/** An entry's key: the token's SHA-256 (as stored), base64. A one-shot digest (no Hash object):
 * this runs on every read that carries a token. */
const keyOf = (token: string): string => hash('sha256', token, 'base64');

/** The member a token names when this node has it in memory and fresh, without waiting; undefined
 * when it must be looked up (`memberForRead`). */
export const memberForReadNow = (ctx: Ctx, token: string): IdentityRow | undefined => fresh(ctx, keyOf(token));

function fresh(ctx: Ctx, key: string): IdentityRow | undefined {
  const hit = cacheOf(ctx).get(key);
  return hit && Date.now() - hit.at < TOKEN_CACHE_MS ? hit.member : undefined;
}

/** The member a token names, for a read on an open route; null when unknown. The token is
 * digested once: the key is the stored hash in base64. */
export async function memberForRead(ctx: Ctx, token: string): Promise<IdentityRow | null> {
  const digest = hashToken(token);
  const key = digest.toString('base64');
  const hit = fresh(ctx, key);
  if (hit) return hit;
  const cache = cacheOf(ctx);
  const now = Date.now();
  const member = await ids.findByTokenHash(ctx.sql, digest);
  if (member) {
    if (cache.size >= MAX_ENTRIES) cache.clear();
    cache.set(key, { member, at: now });
  } else cache.delete(key);
  return member;
}

/** Called after a token changed (rotated, recovered, revoked): every node forgets its entries. */
export async function tokensChanged(ctx: Ctx): Promise<void> {
  caches.get(ctx)?.clear();
  try {
    await ctx.bus.publish({ topic: TOKENS_TOPIC, id: String(Date.now()), data: null });
  } catch (err) {
    // Other nodes still look the token up again within TOKEN_CACHE_MS, and refuse it on writes.
    ctx.log.warn({ err }, 'tokens: publishing the change to the bus failed');
  }
}
