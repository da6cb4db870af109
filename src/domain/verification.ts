// Turns one on-chain check into the deposit's next state (spec 3.3; DECISIONS.md "Treasury and
// deposits"). The deposit machine decides the move; this records it, credits the beneficiary once
// and publishes the verified deposit on the `treasury` topic.

import { type DepositEvent, depositNext, rejectReason } from '../machines/deposit.js';
import type { DepositRow } from '../store/deposits.js';
import * as store from '../store/deposits.js';
import { addPoints } from '../store/points.js';
import { txWithRetry } from '../store/retry.js';
import { formatAmount } from './amounts.js';
import { countContribution, publishChange } from './campaigns.js';
import type { ChainCheck } from './chain.js';
import { feedEntry } from './deposits.js';
import { addItems, announce, excerpt, link } from './inbox.js';
import type { Ctx } from './ports.js';
import { countsAsSupport } from './support-minimum.js';
import { formatMember } from './tokens.js';

export type CheckOutcome = ChainCheck | { kind: 'error'; message: string };

/** Activity points for verified treasury support, once per identity (DECISIONS.md "Scores"). */
export const TREASURY_SUPPORT_POINTS = 300;

const BACKOFF_BASE_MS = 15_000;
const BACKOFF_MAX_MS = 10 * 60_000;

/** Wait before the next check: 15 s doubling per attempt, at most 10 min, never past expiry. */
export function nextCheckAt(now: Date, attempts: number, expiresAt: Date): Date {
  const delay = Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, Math.min(attempts - 1, 20)), BACKOFF_MAX_MS);
  return new Date(Math.min(now.getTime() + delay, expiresAt.getTime()));
}

function eventFor(outcome: CheckOutcome, expired: boolean, seen: boolean): DepositEvent {
  if (outcome.kind === 'confirmed') return { type: 'CONFIRMED' };
  if (outcome.kind === 'refused') return { type: 'REFUSED', reason: outcome.reason };
  // Not found yet, too few confirmations, or the peer failed: wait, until 24 h have passed.
  return expired ? { type: 'EXPIRE', seen } : { type: 'PENDING' };
}

/** A verified amount at or above TREASURY_SUPPORT_MIN_* (src/domain/support-minimum.ts). */
const earnsPoints = (ctx: Ctx, d: DepositRow): boolean => d.amount_base !== null && countsAsSupport(ctx.config, d.asset, d.amount_base);

/** Applies a check to a leased deposit; returns the updated row, or null if another verifier won. */
export async function applyCheck(ctx: Ctx, row: DepositRow, outcome: CheckOutcome): Promise<DepositRow | null> {
  const now = ctx.clock.now();
  if (row.state !== 'submitted' && row.state !== 'verifying') return null;
  const current = row.state === 'submitted' ? depositNext('submitted', { type: 'BEGIN' }) : row.state;
  const seenNow = outcome.kind === 'pending' || outcome.kind === 'confirmed' || outcome.kind === 'refused';
  const event = eventFor(outcome, now.getTime() >= row.expires_at.getTime(), seenNow || row.seen_at !== null);
  const next = current ? depositNext(current, event) : null;
  if (!next || next === 'submitted') {
    ctx.log.error({ deposit: row.id, from: row.state, event: event.type }, 'deposit machine refused a verification move');
    return null;
  }
  const patch: store.CheckPatch = {
    state: next,
    reason: next === 'rejected' ? rejectReason(event) : null,
    amountBase: next === 'verified' && outcome.kind === 'confirmed' ? outcome.amountBase : null,
    confirmations: outcome.kind === 'pending' || outcome.kind === 'confirmed' ? outcome.confirmations : null,
    blockNumber: outcome.kind === 'pending' || outcome.kind === 'confirmed' ? outcome.blockNumber : null,
    nextCheckAt: next === 'verifying' ? nextCheckAt(now, row.attempts, row.expires_at) : now,
    seenAt: seenNow ? now : null,
    lastError: outcome.kind === 'error' ? outcome.message.slice(0, 500) : null,
    // The sender's proof is judged once, by the check that verifies (docs/treasury.md "Crediting").
    senderProof:
      next === 'verified' && row.sender_signature !== null
        ? outcome.kind === 'confirmed' && outcome.senderSigned === true
          ? 'valid'
          : 'invalid'
        : null,
    at: now,
  };
  const done = await txWithRetry(ctx.sql, async (tx) => {
    const u = await store.recordCheck(tx, row.id, row.state, patch);
    // Its exact amount counts toward the campaign it names, in this same transaction.
    const campaign = u?.state === 'verified' ? await countContribution(ctx, tx, u) : null;
    if (u?.state === 'verified' && u.on_behalf_of !== null) {
      // Serialise per identity so its first verified deposit is credited once; the partial unique
      // index point_events_treasury_support_once backs this up.
      await tx`SELECT id FROM identities WHERE id = ${u.on_behalf_of} FOR UPDATE`;
      // Points only with proof from the sender (DECISIONS.md "Scores and badges"): reports are
      // public on chain before anyone reports them, so a claim alone would let a watcher of the
      // chain take every donor's points. And only for value: below the minimum, none.
      if (u.sender_proof === 'valid' && earnsPoints(ctx, u) && !(await store.hasTreasurySupportPoints(tx, u.on_behalf_of))) {
        await addPoints(tx, { identityId: u.on_behalf_of }, 'treasury_support', TREASURY_SUPPORT_POINTS, `deposit:${u.id}`);
      }
      // The member a verified deposit was made for hears of it (DECISIONS.md "Inbox").
      const amount = u.amount_base === null ? '' : ` ${formatAmount(u.asset, u.amount_base)} ${u.asset}`;
      const items = await addItems(tx, [
        {
          owner: u.on_behalf_of,
          kind: 'deposit',
          actor: null,
          subjectType: 'deposit',
          subjectId: u.id,
          url: link(ctx, `/api/v1/treasury/deposits/${u.id}`),
          excerpt: excerpt(`verified deposit of${amount} from ${u.contributor_name}`),
        },
      ]);
      return { row: u, items, campaign };
    }
    return { row: u, items: [], campaign };
  });
  await announce(ctx, done.items);
  const updated = done.row;
  if (updated?.state === 'verified') {
    await ctx.bus.publish({
      topic: 'treasury',
      id: updated.feed_seq ?? updated.id,
      data: { kind: 'deposit_verified', ...feedEntry(updated) },
    });
    ctx.log.info(
      { deposit: updated.id, asset: updated.asset, on_behalf_of: updated.on_behalf_of && formatMember(updated.on_behalf_of) },
      'deposit verified',
    );
  } else if (updated?.state === 'rejected') {
    ctx.log.info({ deposit: updated.id, reason: updated.reason }, 'deposit rejected');
  }
  await publishChange(ctx, done.campaign);
  return updated;
}
