// Member tokens resolved for reads, kept in memory so a read with a token costs what an anonymous
// read costs (no database round trip). Only reads on open routes use it, where a stale token is
// ignored anyway (src/transport/admission/resolve-caller.ts; there the caller decides only the guest headers);
// writes and member routes always verify against the database (a write that takes its member from
// here checks the token's hash in its own transaction: chat posts, task posts and moves), so a
// revoked or rotated token is refused by them at once on every node. A rotation, recovery or revocation also clears
// this node's entries at once and every other node's through the bus; entries older than
// TOKEN_CACHE_MS are looked up again, bounding what any other change of the row could leave stale.

import type { IdentityRow } from '../store/identities.js';
import * as ids from '../store/identities.js';
import type { Ctx, TokenCacheEntry, TokenCacheState } from './ports.js';
import { tokenKeyOfHash } from './tokens.js';

export const TOKENS_TOPIC = 'identity.tokens';
/** A member token was issued (registration): every node's rate limits know it as valid. */
export const TOKEN_ISSUED_TOPIC = 'identity.token-issued';
export const TOKEN_CACHE_MS = 2000;
const MAX_ENTRIES = 50_000;

type Cache = TokenCacheState;

/** Starts this node's token cache (src/app.ts): it is ctx.services.tokenCache, and every token
 * change heard on the bus clears it. Returns its stop, which the starter calls on close. */
export function openTokenCache(ctx: Ctx): () => void {
  const cache: Cache = { entries: new Map(), pending: new Map(), generation: 0 };
  const unsubscribe = ctx.bus.subscribe(TOKENS_TOPIC, () => clear(cache));
  ctx.services.tokenCache = cache;
  return () => {
    unsubscribe();
    clear(cache);
    if (ctx.services.tokenCache === cache) ctx.services.tokenCache = null;
  };
}

/** The node's cache; without one (not started, or stopped) a throwaway one: every read looks up. */
function cacheOf(ctx: Ctx): Cache {
  return ctx.services.tokenCache ?? { entries: new Map(), pending: new Map(), generation: 0 };
}

function clear(c: Cache): void {
  c.entries.clear();
  c.pending.clear();
  c.generation++;
}

/** A token as the cache takes it, digested once by the request's credential
 * (src/transport/admission/credential.ts): nothing here digests a token again. */
export interface TokenDigest {
  /** The token's SHA-256 (as stored) in base64: an entry's key. */
  readonly digest: string;
  /** The same SHA-256 as bytes, for a lookup. */
  readonly hash: Buffer;
}

/**
 * The member a token names when this node has it in memory and fresh, without waiting; undefined
 * when it must be looked up (`memberForRead`). An entry past half its life is looked up again in
 * the background while it is still served: under steady reads a token never expires, so the
 * reads never fall, all at once, to the database (before, every TOKEN_CACHE_MS each connection's
 * read took the general path together: p99 65 ms against 8 ms anonymous, BENCHMARKS.md reads).
 */
export function memberForReadNow(ctx: Ctx, t: TokenDigest): IdentityRow | undefined {
  const c = cacheOf(ctx);
  const key = t.digest;
  const hit = fresh(c, key);
  if (!hit) return undefined;
  if (Date.now() - hit.at >= TOKEN_CACHE_MS / 2 && !hit.refreshing) {
    hit.refreshing = true;
    lookup(ctx, c, key, t.hash).catch((err: unknown) => ctx.log.warn({ err }, 'tokens: refreshing a cached token failed'));
  }
  return hit.member;
}

/** The member a token (by its stored hash) names, for a read on an open route; null when unknown. */
export async function memberForRead(ctx: Ctx, t: TokenDigest): Promise<IdentityRow | null> {
  const key = t.digest;
  const c = cacheOf(ctx);
  return fresh(c, key)?.member ?? c.pending.get(key) ?? lookup(ctx, c, key, t.hash);
}

/** The entry of a key while it is within TOKEN_CACHE_MS of its lookup. */
function fresh(c: Cache, key: string): TokenCacheEntry | undefined {
  const hit = c.entries.get(key);
  return hit && Date.now() - hit.at < TOKEN_CACHE_MS ? hit : undefined;
}

/** One database lookup of a token, shared by whoever asks meanwhile; its answer is kept unless a
 * clear came while it was in flight (the token may have changed after the row was read). */
function lookup(ctx: Ctx, c: Cache, key: string, digest: Buffer): Promise<IdentityRow | null> {
  const generation = c.generation;
  const now = Date.now();
  const p = ids.findByTokenHash(ctx.sql, digest).then(
    (member) => {
      if (c.pending.get(key) === p) c.pending.delete(key);
      if (c.generation !== generation) return member;
      if (member) {
        if (c.entries.size >= MAX_ENTRIES) c.entries.clear();
        c.entries.set(key, { member, at: now });
      } else c.entries.delete(key);
      return member;
    },
    (err: unknown) => {
      if (c.pending.get(key) === p) c.pending.delete(key);
      throw err;
    },
  );
  c.pending.set(key, p);
  return p;
}

/** What a token change tells every node (bus topic TOKENS_TOPIC): whose token changed, the key
 * (`tokenKeyOfHash`) of the one token of that identity still valid (null: none), and why. The
 * stream ends every session of that identity opened with another token (DECISIONS.md "Identities
 * and numbers": rotation, recovery and revocation end the old token's sessions on every node). */
export interface TokenChange {
  identity_id: number;
  keep: string | null;
  reason: 'token rotated' | 'token recovered' | 'token revoked';
}

/** Called after a token changed (rotated, recovered, revoked): every node forgets its entries and
 * ends the sessions the old token opened. */
export async function tokensChanged(ctx: Ctx, change: TokenChange | null = null): Promise<void> {
  const c = ctx.services.tokenCache;
  if (c) clear(c);
  try {
    await ctx.bus.publish({ topic: TOKENS_TOPIC, id: String(Date.now()), data: change });
  } catch (err) {
    // Other nodes still look the token up again within TOKEN_CACHE_MS, and refuse it on writes.
    ctx.log.warn({ err }, 'tokens: publishing the change to the bus failed');
  }
}

/** Called after a registration issued a token: every node learns its key (never the token), so
 * the member's first call on any node is not taken for a stranger's (docs/security.md). */
export async function tokenIssued(ctx: Ctx, hash: Buffer): Promise<void> {
  try {
    await ctx.bus.publish({ topic: TOKEN_ISSUED_TOPIC, id: String(Date.now()), data: { key: tokenKeyOfHash(hash) } });
  } catch (err) {
    // The member's token is still looked up on other nodes (at the probe's rate when over budget).
    ctx.log.warn({ err }, 'tokens: publishing an issued token to the bus failed');
  }
}
