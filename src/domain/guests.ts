// Guest identities (spec 5.2; DECISIONS.md): numbers are handed out from blocks reserved in the
// database, and the token is self-contained, so an anonymous request writes nothing.
import * as ids from '../store/identities.js';
import type { Ctx } from './ports.js';
import { formatGuest, signGuestToken, verifyGuestToken } from './tokens.js';

const BLOCK = 1000; // must match guest_block_seq's INCREMENT in sql/001_foundation.sql

export class GuestIssuer {
  private next = 0;
  private end = 0;
  /** Start of a block reserved ahead, taken when the current one runs out. */
  private queued: number | null = null;
  private refill: Promise<void> | null = null;

  constructor(private readonly ctx: Ctx) {}

  /** Whether `issueNow` would issue a guest (the reserved block is not spent). */
  get canIssueNow(): boolean {
    return this.next < this.end;
  }

  /** A guest issued at once from the reserved block, or null when the block is spent (then `issue`). */
  issueNow(): { guestNumber: number; number: string; token: string } | null {
    if (this.next >= this.end) return null;
    return this.take();
  }

  async issue(): Promise<{ guestNumber: number; number: string; token: string }> {
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

  private take(): { guestNumber: number; number: string; token: string } {
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

/** The guest behind a token, or null when it is forged, expired or ended by registration. */
export async function resolveGuestToken(ctx: Ctx, token: string): Promise<number | null> {
  const parsed = verifyGuestToken(ctx.secret, token, Math.floor(ctx.clock.now().getTime() / 1000));
  if (!parsed) return null;
  if (await ids.guestEnded(ctx.sql, parsed.guestNumber)) return null;
  return parsed.guestNumber;
}
