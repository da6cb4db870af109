// Guest identities (spec 5.2; DECISIONS.md "Identities and numbers"): numbers are handed out from
// blocks reserved in the database, and the token is self-contained, so an anonymous request writes
// nothing. Reads do not use up numbers: an anonymous read gets the provisional number of its client
// address, shared by every reader there; the first write with it claims that number (or, when
// another writer claimed it first, takes a fresh one), so two writing guests never share a number.
import * as ids from '../store/identities.js';
import type { Ctx } from './ports.js';
import { formatGuest, signGuestToken, verifyGuestToken } from './tokens.js';

const BLOCK = 1000; // must match guest_block_seq's INCREMENT in sql/001_foundation.sql
/** Client addresses remembered with their provisional number (the oldest is forgotten first). */
const ADDRESSES = 50_000;
/** A provisional token is signed again after a day, so the one handed out never nears expiry. */
const RESIGN_S = 86_400;

export interface IssuedGuest {
  guestNumber: number;
  number: string;
  token: string;
}

interface Provisional extends IssuedGuest {
  signedAtS: number;
}

export class GuestIssuer {
  private next = 0;
  private end = 0;
  /** Start of a block reserved ahead, taken when the current one runs out. */
  private queued: number | null = null;
  private refill: Promise<void> | null = null;

  private readonly byAddress = new Map<string, Provisional | Promise<Provisional>>();
  private readonly addressOf = new Map<number, string>();

  constructor(private readonly ctx: Ctx) {}

  private nowS(): number {
    return Math.floor(this.ctx.clock.now().getTime() / 1000);
  }

  /**
   * The provisional guest of a client address, for an anonymous read: the same number for every
   * read from there until a write claims it (then the next read there gets a new one), so a million
   * reads from a few clients use a few numbers. Synchronous when known (the hot path).
   */
  provisional(address: string): IssuedGuest | Promise<IssuedGuest> {
    const known = this.byAddress.get(address);
    if (known && !(known instanceof Promise)) {
      if (this.nowS() - known.signedAtS < RESIGN_S) return known;
      const fresh = this.signProvisional(known.guestNumber);
      this.byAddress.set(address, fresh);
      return fresh;
    }
    if (known) return known;
    const pending = this.issue().then((g) => {
      const p = this.signProvisional(g.guestNumber);
      if (this.byAddress.get(address) === pending) {
        this.byAddress.set(address, p);
        this.addressOf.set(p.guestNumber, address);
      }
      return p;
    });
    pending.catch(() => this.byAddress.delete(address));
    this.byAddress.set(address, pending);
    if (this.byAddress.size > ADDRESSES) this.dropOldest();
    return pending;
  }

  /** A write claimed this provisional number: its address gets a new one on its next read. */
  claimed(guestNumber: number): void {
    const address = this.addressOf.get(guestNumber);
    if (address === undefined) return;
    this.addressOf.delete(guestNumber);
    const entry = this.byAddress.get(address);
    if (entry && !(entry instanceof Promise) && entry.guestNumber === guestNumber) this.byAddress.delete(address);
  }

  /** The (non-provisional) token of a guest number that a write now owns. */
  own(guestNumber: number): IssuedGuest {
    return { guestNumber, number: formatGuest(guestNumber), token: signGuestToken(this.ctx.secret, guestNumber, this.nowS()) };
  }

  private signProvisional(guestNumber: number): Provisional {
    const signedAtS = this.nowS();
    const token = signGuestToken(this.ctx.secret, guestNumber, signedAtS, true);
    return { guestNumber, number: formatGuest(guestNumber), token, signedAtS };
  }

  private dropOldest(): void {
    const [address, entry] = this.byAddress.entries().next().value as [string, Provisional | Promise<Provisional>];
    this.byAddress.delete(address);
    if (!(entry instanceof Promise)) this.addressOf.delete(entry.guestNumber);
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
 * provisional token is shared by the readers at one address: a registration by one of them does
 * not end it for the others (their next write takes a number of its own). */
export async function resolveGuest(ctx: Ctx, token: string): Promise<{ guestNumber: number; provisional: boolean } | null> {
  const parsed = verifyGuestToken(ctx.secret, token, Math.floor(ctx.clock.now().getTime() / 1000));
  if (!parsed) return null;
  if (!parsed.provisional && (await ids.guestEnded(ctx.sql, parsed.guestNumber))) return null;
  return { guestNumber: parsed.guestNumber, provisional: parsed.provisional };
}

/** Claims a provisional number for its first writer (a row in guests, inserted once); false when
 * another writer claimed it first. */
export async function claimGuest(ctx: Ctx, guests: GuestIssuer, provisionalNumber: number): Promise<boolean> {
  if (!(await ids.claimGuestNumber(ctx.sql, provisionalNumber))) return false;
  guests.claimed(provisionalNumber);
  return true;
}

/**
 * A write presenting a provisional token: the first writer claims the number (a row in guests,
 * inserted once), any later one gets a fresh number. Either way the answer announces the guest's
 * own token in the same headers.
 */
export async function ownGuest(ctx: Ctx, guests: GuestIssuer, provisionalNumber: number): Promise<IssuedGuest> {
  return (await claimGuest(ctx, guests, provisionalNumber)) ? guests.own(provisionalNumber) : guests.issue();
}
