// Guest identities (spec 5.2; DECISIONS.md "Identities and numbers"): numbers are handed out from
// blocks reserved in the database, and the token is self-contained, so an anonymous request writes
// nothing. Reads do not use up numbers: an anonymous read gets the provisional number of its client
// address, shared by every reader there, in a token of its own (a nonce). The first write with
// such a token claims a number for that token (the provisional one, or a fresh one when another
// token claimed that first), recorded in guest_claims, and every later write with the same token
// is that guest: two writing guests never share a number, and one token is never two guests.
//
// A read's token costs no signature (issue 47): the signed part of an address's provisional
// tokens is made once per WINDOW_S (src/domain/tokens.ts, layout v2), and each read appends a
// nonce of its own, cut from a pool of random characters; so every read's token is still its own.
import * as ids from '../store/identities.js';
import { nonce, readNonce } from './guest-nonces.js';
import type { Ctx } from './ports.js';
import { formatGuest, type GuestClaims, hashToken, signGuestToken, signProvisionalBase, verifyGuestToken } from './tokens.js';

const BLOCK = 1000; // must match guest_block_seq's INCREMENT in sql/001_foundation.sql
/** Client addresses remembered with their provisional number (the oldest is forgotten first). */
const ADDRESSES = 50_000;
/** Claims remembered by this node (a claim never changes; the oldest is forgotten first). */
const CLAIMS = 100_000;
/** Seconds the signed part of an address's provisional tokens is reused (its issue time, which
 * dates those tokens, is at most this old: their 30 days run from it). */
const WINDOW_S = 60;

export interface IssuedGuest {
  guestNumber: number;
  number: string;
  token: string;
}

/** The signed part of one provisional number's tokens for one window (a new value each window). */
export interface ProvisionalBase {
  readonly guestNumber: number;
  /** The number as announced (GUEST-00000001). */
  readonly number: string;
  /** The token up to its read nonce (prefix included). */
  readonly base: string;
  readonly signedAtS: number;
}

export class GuestIssuer {
  private next = 0;
  private end = 0;
  /** Start of a block reserved ahead, taken when the current one runs out. */
  private queued: number | null = null;
  private refill: Promise<void> | null = null;

  private readonly byAddress = new Map<string, number | Promise<number>>();
  private readonly addressOf = new Map<number, string>();
  /** Claimed numbers by token hash (base64url), for counting a token's writes as its guest. */
  private readonly claims = new Map<string, number>();
  /** The signed part of each provisional number's tokens this window, and when it was signed. */
  private readonly bases = new Map<number, ProvisionalBase>();
  /** The address `provisionalBase` last answered and its base (one client under load: no lookup);
   * forgotten whenever an address's number or a base changes. */
  private lastAddress: string | null = null;
  private lastBase: ProvisionalBase | null = null;

  constructor(private readonly ctx: Ctx) {}

  private nowS(): number {
    const clock = this.ctx.clock;
    return Math.floor(clock.nowMs() / 1000);
  }

  /**
   * A provisional guest for an anonymous read: the number of its client address, the same for
   * every read from there until a write claims it (then the next read there gets a new one), so a
   * million reads from a few clients use a few numbers; the token is this read's own (a nonce).
   * Synchronous when the address's number is known (the hot path).
   */
  provisional(address: string): IssuedGuest | Promise<IssuedGuest> {
    const known = this.byAddress.get(address);
    if (typeof known === 'number') return this.signProvisional(known);
    if (known) return known.then((n) => this.signProvisional(n));
    this.forgetLast();
    const pending = this.issue().then((g) => {
      if (this.byAddress.get(address) === pending) {
        this.forgetLast();
        this.byAddress.set(address, g.guestNumber);
        this.addressOf.set(g.guestNumber, address);
      }
      return g.guestNumber;
    });
    pending.catch(() => {
      this.forgetLast();
      this.byAddress.delete(address);
    });
    this.byAddress.set(address, pending);
    if (this.byAddress.size > ADDRESSES) this.dropOldest();
    return pending.then((n) => this.signProvisional(n));
  }

  /**
   * The lean read's form of `provisional`: the signed part of the address's tokens this window,
   * when the address's number is known already (null: the general path issues it). The read's
   * token is `base` followed by a nonce of its own (`readNonceInto`), as `provisional` makes it.
   */
  provisionalBase(address: string): ProvisionalBase | null {
    const now = this.nowS();
    const last = this.lastBase;
    if (last !== null && address === this.lastAddress && now - last.signedAtS < WINDOW_S && last.signedAtS <= now) return last;
    const known = this.byAddress.get(address);
    if (typeof known !== 'number') return null;
    const b = this.baseOf(known, now);
    this.lastAddress = address;
    this.lastBase = b;
    return b;
  }

  private forgetLast(): void {
    this.lastAddress = null;
    this.lastBase = null;
  }

  /** A write claimed this provisional number: its address gets a new one on its next read. */
  claimed(guestNumber: number): void {
    const address = this.addressOf.get(guestNumber);
    if (address === undefined) return;
    this.forgetLast();
    this.addressOf.delete(guestNumber);
    this.bases.delete(guestNumber);
    if (this.byAddress.get(address) === guestNumber) this.byAddress.delete(address);
  }

  /** The (non-provisional) token of a guest number that a write now owns. */
  own(guestNumber: number): IssuedGuest {
    return { guestNumber, number: formatGuest(guestNumber), token: signGuestToken(this.ctx.secret, guestNumber, this.nowS()) };
  }

  /** The number a provisional token claimed, when this node knows it (cache) or the database
   * does; null before its first write. */
  async claimOf(token: string): Promise<number | null> {
    const key = hashToken(token);
    const cached = this.claims.get(key.toString('base64url'));
    if (cached !== undefined) return cached;
    const c = await ids.guestClaim(this.ctx.sql, key);
    if (c) this.remember(key, c.guestNumber);
    return c?.guestNumber ?? null;
  }

  remember(tokenHash: Buffer, guestNumber: number): void {
    if (this.claims.size >= CLAIMS) this.claims.delete(this.claims.keys().next().value as string);
    this.claims.set(tokenHash.toString('base64url'), guestNumber);
  }

  private signProvisional(guestNumber: number): IssuedGuest {
    const b = this.baseOf(guestNumber);
    return { guestNumber, number: b.number, token: b.base + readNonce() };
  }

  /** This window's signed part of a provisional number's tokens, signed when the window opens. */
  private baseOf(guestNumber: number, now = this.nowS()): ProvisionalBase {
    let b = this.bases.get(guestNumber);
    if (b === undefined || now - b.signedAtS >= WINDOW_S || b.signedAtS > now) {
      const base = signProvisionalBase(this.ctx.secret, guestNumber, now, nonce());
      b = { guestNumber, number: formatGuest(guestNumber), base, signedAtS: now };
      this.forgetLast();
      this.bases.set(guestNumber, b);
      if (this.bases.size > ADDRESSES) this.bases.delete(this.bases.keys().next().value as number);
    }
    return b;
  }

  private dropOldest(): void {
    this.forgetLast();
    const [address, entry] = this.byAddress.entries().next().value as [string, number | Promise<number>];
    this.byAddress.delete(address);
    if (typeof entry === 'number') {
      this.addressOf.delete(entry);
      this.bases.delete(entry);
    }
  }

  async issue(): Promise<IssuedGuest> {
    while (this.next >= this.end) {
      if (this.queued === null) await this.reserve();
      if (this.queued !== null) {
        this.next = this.queued;
        this.end = this.queued + BLOCK;
        this.queued = null;
      }
    }
    return this.take();
  }

  private take(): IssuedGuest {
    const guestNumber = this.next++;
    // Reserve the following block ahead of time so issuing stays off the database.
    if (this.end - this.next < BLOCK / 10 && this.queued === null) void this.reserve().catch(() => {});
    const token = signGuestToken(this.ctx.secret, guestNumber, Math.floor(this.ctx.clock.now().getTime() / 1000));
    return { guestNumber, number: formatGuest(guestNumber), token };
  }

  private reserve(): Promise<void> {
    this.refill ??= ids
      .reserveGuestBlock(this.ctx.sql)
      .then((start) => {
        this.queued = start;
      })
      .finally(() => {
        this.refill = null;
      });
    return this.refill;
  }
}

/** The guest behind a token, or null when it is forged, expired or ended by registration. A
 * provisional token that has written is the guest it claimed (`claims`: looked up, for a write);
 * one that has not (or a read, which does not look) is its address's shared provisional number. */
export async function resolveGuest(
  ctx: Ctx,
  token: string,
  claims = false,
  /** The token's signature, when the caller checked it already (the request's credential). */
  parsed: GuestClaims | null = verifyGuestToken(ctx.secret, token, Math.floor(ctx.clock.now().getTime() / 1000)),
): Promise<{ guestNumber: number; provisional: boolean } | null> {
  if (!parsed) return null;
  if (!parsed.provisional) return (await ids.guestEnded(ctx.sql, parsed.guestNumber)) ? null : parsed;
  if (!claims) return parsed;
  const c = await ids.guestClaim(ctx.sql, hashToken(token));
  if (!c) return parsed;
  return c.ended ? null : { guestNumber: c.guestNumber, provisional: false };
}

/**
 * The first write with a provisional token: claims a number for that token, once across nodes.
 * The address's provisional number when no other token claimed it first (a row in guests,
 * inserted once), a fresh one otherwise; of raced writes with one token the claim recorded first
 * is every writer's. The answer announces the guest's own token; the provisional one stays that
 * guest's too.
 */
export async function claimToken(ctx: Ctx, guests: GuestIssuer, token: string, provisionalNumber: number): Promise<IssuedGuest> {
  const hash = hashToken(token);
  const won = await ids.claimGuestNumber(ctx.sql, provisionalNumber);
  if (won) guests.claimed(provisionalNumber);
  const candidate = won ? provisionalNumber : (await guests.issue()).guestNumber;
  const guestNumber = await ids.recordGuestClaim(ctx.sql, hash, candidate);
  guests.remember(hash, guestNumber);
  return guests.own(guestNumber);
}
