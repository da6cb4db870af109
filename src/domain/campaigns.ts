// Fundraising campaigns opened by residents (spec 1.8, 2.8; docs/treasury.md "Campaigns"). A
// campaign raises into the treasury's own addresses: deposits reported with its `campaign_id` count
// toward it once verified on chain (src/domain/verification.ts calls countContribution inside the
// crediting transaction). The campaign machine decides every move.
import { type CampaignState, campaignNext } from '../machines/campaign.js';
import { writeAudit } from '../store/audit.js';
import type { DepositRow } from '../store/deposits.js';
import * as store from '../store/funding.js';
import type { IdentityRow } from '../store/identities.js';
import type { Tx } from '../store/ledger.js';
import { addPoints } from '../store/points.js';
import { txWithRetry } from '../store/retry.js';
import { type Asset, formatAmount } from './amounts.js';
import { UNTRUSTED } from './caller.js';
import { CAMPAIGN_POINTS, type CampaignView, campaignView, MAX_CAMPAIGN_DAYS, MAX_OPEN_CAMPAIGNS } from './campaign-view.js';
import { fail } from './errors.js';
import { addItems, announce, excerpt, link, type OwnedItem } from './inbox.js';
import type { Ctx } from './ports.js';
import { countsAsSupport } from './support-minimum.js';
import { formatMember } from './tokens.js';

export { CAMPAIGN_POINTS, MAX_CAMPAIGN_DAYS, MAX_OPEN_CAMPAIGNS };

export interface CampaignInput {
  title: string;
  purpose: string;
  asset: Asset;
  targetBase: bigint;
  endsAt: Date | null;
}

export async function openCampaign(ctx: Ctx, member: IdentityRow, input: CampaignInput) {
  const at = ctx.clock.now();
  if (input.endsAt !== null) {
    const latest = at.getTime() + MAX_CAMPAIGN_DAYS * 86_400_000;
    if (input.endsAt.getTime() <= at.getTime() || input.endsAt.getTime() > latest) {
      const message = `a future time at most ${MAX_CAMPAIGN_DAYS} days from now (until ${new Date(latest).toISOString()})`;
      // 409, not 400: any instant is well formed; the clock decides whether it is in the window.
      fail('INVALID_STATE', `ends_at must be ${message}`, { fields: [{ path: 'body.ends_at', message }] });
    }
  }
  const row = await txWithRetry(ctx.sql, async (tx) => {
    // The member's row serialises its openings, so the cap holds under concurrency.
    await tx`SELECT id FROM identities WHERE id = ${member.id} FOR UPDATE`;
    if ((await store.countOpenBy(tx, member.id)) >= MAX_OPEN_CAMPAIGNS) {
      fail('CAMPAIGN_LIMIT', `a member may have at most ${MAX_OPEN_CAMPAIGNS} open campaigns; close or finish one first`, {
        next: { method: 'GET', path: '/api/v1/funding/campaigns?state=open' },
      });
    }
    const c = await store.insertCampaign(tx, { ...input, openedBy: member.id, at });
    await addPoints(tx, { identityId: member.id }, 'funding_campaign', CAMPAIGN_POINTS, `campaign:${c.id}`);
    return c;
  });
  const view = campaignView(ctx, row);
  await publish(ctx, 'campaign_opened', view);
  return { ...view, points_awarded: CAMPAIGN_POINTS, content_trust: UNTRUSTED };
}

export async function listCampaigns(ctx: Ctx, state: CampaignState | 'all', limit: number, before: string | undefined) {
  const cursor = before !== undefined && /^\d{1,18}$/.test(before) ? BigInt(before) : null;
  const rows = await store.listCampaigns(ctx.sql, state === 'all' ? null : state, limit + 1, cursor);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    campaigns: page.map((r) => campaignView(ctx, r)),
    next_cursor: rows.length > limit && last ? last.seq : null,
    content_trust: UNTRUSTED,
  };
}

const notFound = (id: string): never =>
  fail('NOT_FOUND', `no campaign ${id}`, { next: { method: 'GET', path: '/api/v1/funding/campaigns' } });

export async function getCampaign(ctx: Ctx, id: string) {
  const row = await store.findCampaign(ctx.sql, id);
  if (!row || row.hidden) return notFound(id);
  return { ...campaignView(ctx, row), content_trust: UNTRUSTED };
}

/**
 * A deposit report naming a campaign (in the report's transaction, the campaign row share-locked
 * so a concurrent close orders before or after it): it must exist and not be hidden (404), be open
 * (409 INVALID_STATE) and raise the deposit's asset (400 on body.campaign_id).
 */
export async function checkReportable(tx: Tx, id: string, asset: Asset, now: Date): Promise<void> {
  const row = await store.lockCampaign(tx, id, 'share');
  if (!row || row.hidden) return notFound(id);
  if (campaignNext(row.state, { type: 'REPORT' }) === null || overdue(row, now)) {
    const state = overdue(row, now) ? 'ended' : row.state;
    fail('INVALID_STATE', `campaign ${id} is ${state}; it takes no new contributions`, {
      next: { method: 'GET', path: `/api/v1/funding/campaigns/${id}` },
    });
  }
  if (row.asset !== asset) {
    const message = `campaign ${id} raises ${row.asset}; this is a ${asset} transaction`;
    // 409, not 400: the report is well formed; the campaign's asset (its state) refuses it.
    fail('INVALID_STATE', message, { fields: [{ path: 'body.campaign_id', message }] });
  }
}

export interface CampaignChange {
  kind: 'campaign_contribution' | 'campaign_funded' | 'campaign_ended' | 'campaign_closed';
  view: CampaignView;
  items: OwnedItem[];
  hidden: boolean;
}

/** The opener's inbox item for a move the service or the operator made (DECISIONS.md "Inbox", kind `campaign`). */
async function noteMove(ctx: Ctx, tx: Tx, row: store.CampaignRow, what: string): Promise<OwnedItem[]> {
  if (row.hidden) return [];
  return addItems(tx, [
    {
      owner: row.opened_by,
      kind: 'campaign',
      actor: null,
      subjectType: 'campaign',
      subjectId: row.id,
      url: link(ctx, `/api/v1/funding/campaigns/${row.id}`),
      excerpt: excerpt(
        `${what}: ${row.title} (${formatAmount(row.asset, row.raised_base)} of ${formatAmount(row.asset, row.target_base)} ${row.asset} raised)`,
      ),
    },
  ]);
}

/**
 * Counts a verified deposit toward the campaign it names, in the transaction that verifies it: its
 * exact on-chain amount and one contribution. An open campaign that reaches its target is funded at
 * once; a finished one (the deposit was reported while it was open) counts the amount and stays as
 * it is.
 */
export async function countContribution(ctx: Ctx, tx: Tx, d: DepositRow): Promise<CampaignChange | null> {
  if (d.campaign_id === null || d.amount_base === null) return null;
  const row = await store.lockCampaign(tx, d.campaign_id, 'update');
  if (!row) return null;
  const at = ctx.clock.now();
  // Its ends_at passed before the deadline pass came by: it ended then, before this counts.
  const ended = overdue(row, at) ? campaignNext(row.state, { type: 'END' }) : null;
  const from = ended ?? row.state;
  const amount = BigInt(d.amount_base);
  const reaches = BigInt(row.raised_base) + amount >= BigInt(row.target_base);
  const funded = reaches ? campaignNext(from, { type: 'FUNDED' }) : null;
  const state = funded ?? campaignNext(from, { type: 'CONTRIBUTE' }) ?? from;
  // Below the support minimum the amount adds up but is no contribution (DECISIONS.md "Scores and
  // badges": value before points), so dust cannot make a campaign look supported.
  const counted = countsAsSupport(ctx.config, d.asset, amount);
  if (!counted && amount === 0n && !ended && !funded) return null;
  const after = await store.updateCampaign(tx, row.id, {
    state,
    addBase: amount,
    addContributions: counted ? 1 : 0,
    finishedAt: ended ? row.ends_at : funded ? at : null,
    closedBy: null,
  });
  const move = ended ? 'ended' : funded ? 'funded' : null;
  if (move) await withdrawIfUnsupported(tx, after);
  const items = move ? await noteMove(ctx, tx, after, move) : [];
  return { kind: move ? `campaign_${move}` : 'campaign_contribution', view: campaignView(ctx, after), items, hidden: after.hidden };
}

/**
 * Points a member can take back by undoing what earned them are taken back (DECISIONS.md "Scores
 * and badges"): a campaign that finishes (closed, ended, or funded by amounts below the minimum)
 * with no counted contribution gives its opening points back, in the transaction of that move,
 * so opening and closing cannot mint score. A finishing move happens once per campaign (the
 * machine's finished states are final); a unique index on the ref backs that up (sql/034).
 */
async function withdrawIfUnsupported(tx: Tx, after: store.CampaignRow): Promise<void> {
  if (after.state === 'open' || after.contributions > 0) return;
  await addPoints(tx, { identityId: after.opened_by }, 'funding_campaign_withdrawn', -CAMPAIGN_POINTS, `campaign:${after.id}`);
}

/** An open campaign whose ends_at has passed (the deadline pass ends it within seconds). */
const overdue = (row: store.CampaignRow, now: Date): boolean =>
  row.state === 'open' && row.ends_at !== null && row.ends_at.getTime() <= now.getTime();

/** After the commit: the change on the `treasury` topic, the opener's item on its inbox. */
export async function publishChange(ctx: Ctx, change: CampaignChange | null): Promise<void> {
  if (!change) return;
  await announce(ctx, change.items);
  if (!change.hidden) await publish(ctx, change.kind, change.view);
}

async function publish(ctx: Ctx, kind: string, view: CampaignView): Promise<void> {
  try {
    await ctx.bus.publish({
      topic: 'treasury',
      id: `${view.id}:${kind}:${view.contributions}:${view.raised_verified}`,
      data: { kind, campaign: view },
    });
  } catch (err) {
    ctx.log.warn({ err }, 'campaigns: publishing to the bus failed');
  }
}

/** Closes an open campaign: by its opener (member) or by the operator (audited by the caller). */
export async function closeCampaign(
  ctx: Ctx,
  id: string,
  by: { member: IdentityRow } | { operator: true },
  audit?: (tx: Tx, before: store.CampaignRow) => Promise<void>,
) {
  const change = await txWithRetry(ctx.sql, async (tx) => {
    const row = await store.lockCampaign(tx, id, 'update');
    // The operator can close a hidden campaign; a member cannot see one.
    if (!row || ('member' in by && row.hidden)) return notFound(id);
    if ('member' in by && row.opened_by !== by.member.id) {
      fail('FORBIDDEN', 'only the member who opened a campaign (or the operator) can close it', {
        next: { method: 'GET', path: `/api/v1/funding/campaigns/${id}` },
      });
    }
    const next = campaignNext(row.state, { type: 'CLOSE' });
    if (next === null) {
      fail('INVALID_STATE', `campaign ${id} is already ${row.state}`, { next: { method: 'GET', path: `/api/v1/funding/campaigns/${id}` } });
    }
    const closedBy = 'member' in by ? formatMember(by.member.id) : 'operator';
    const after = await store.updateCampaign(tx, id, {
      state: next as CampaignState,
      addBase: 0n,
      addContributions: 0,
      finishedAt: ctx.clock.now(),
      closedBy,
    });
    await withdrawIfUnsupported(tx, after);
    await audit?.(tx, row);
    // The opener hears of a close it did not make itself (as task items never go to the mover).
    const items = 'member' in by ? [] : await noteMove(ctx, tx, after, 'closed');
    return { kind: 'campaign_closed' as const, view: campaignView(ctx, after), items, hidden: after.hidden };
  });
  await publishChange(ctx, change);
  return { ...change.view, content_trust: UNTRUSTED };
}

/** The operator closes a campaign (hidden ones too), audited in the same transaction. */
export async function operatorClose(ctx: Ctx, id: string, reason: string | undefined, requestId: string) {
  return closeCampaign(ctx, id, { operator: true }, (tx, before) =>
    writeAudit(tx, {
      actor: 'operator',
      action: 'campaign.closed',
      targetType: 'campaign',
      targetId: id,
      detail: { before: before.state, reason: reason ?? null, raised_verified: formatAmount(before.asset, before.raised_base) },
      requestId,
      at: ctx.clock.now(),
    }),
  );
}

/** Ends every open campaign whose ends_at has passed (up to `max`); returns how many ended. Each
 * is taken with SKIP LOCKED and its move, item and mark commit together: once, across nodes and
 * restarts (called from the deadline actor's pass, src/actors/task-deadlines.ts). */
export async function endDueCampaigns(ctx: Ctx, max = 200): Promise<number> {
  let n = 0;
  for (; n < max; n++) {
    const change = await txWithRetry(ctx.sql, async (tx): Promise<CampaignChange | null> => {
      const row = await store.lockNextDue(tx, ctx.clock.now());
      if (!row) return null;
      const next = campaignNext(row.state, { type: 'END' });
      if (next === null) return null;
      const after = await store.updateCampaign(tx, row.id, {
        state: next,
        addBase: 0n,
        addContributions: 0,
        finishedAt: row.ends_at ?? ctx.clock.now(),
        closedBy: null,
      });
      await withdrawIfUnsupported(tx, after);
      const items = await noteMove(ctx, tx, after, 'ended');
      return { kind: 'campaign_ended', view: campaignView(ctx, after), items, hidden: after.hidden };
    });
    if (change === null) break;
    await publishChange(ctx, change);
  }
  return n;
}
