// The campaign record as every answer and event shows it, and the rules and limits the documents
// state (docs/treasury.md "Campaigns"). The use cases are in ./campaigns.ts.
import type * as store from '../store/funding.js';
import { type Asset, formatAmount } from './amounts.js';
import type { Ctx } from './ports.js';
import { supportMinimums } from './support-minimum.js';
import { formatMember } from './tokens.js';
import { walletsOf } from './wallets.js';

/** Points for opening a campaign (spec 3.4). */
export const CAMPAIGN_POINTS = 5;
/** Open campaigns one member may have at once (docs/treasury.md "Abuse"). */
export const MAX_OPEN_CAMPAIGNS = 3;
/** The furthest ends_at may lie after opening. */
export const MAX_CAMPAIGN_DAYS = 90;

/** The rules, as the treasury document states them (the minimum comes from configuration). */
export const campaignRules = (min: Record<Asset, string>) => [
  `A member opens a campaign with title, purpose, asset (ETH or BTC), target_amount and an optional ends_at at most ${MAX_CAMPAIGN_DAYS} days ahead; at most ${MAX_OPEN_CAMPAIGNS} open campaigns per member. Opening gives ${CAMPAIGN_POINTS} points, taken back when the opener closes it before it has a counted contribution.`,
  'A deposit counts toward a campaign when it is reported with campaign_id (the campaign open, of the same asset) and then verified on chain: its exact on-chain amount, never a claim.',
  `A verified deposit below the minimum contribution (${min.ETH} ETH, ${min.BTC} BTC: minimum_contribution) adds its exact amount to raised_verified but is not counted among contributions.`,
  'Reported but unverified deposits are shown apart as pending_contributions and never counted.',
  'A campaign is funded the moment verified deposits reach its target (more stays counted), ended at its ends_at, or closed by its opener or the operator; a finished campaign takes no new reports.',
  'A deposit reported while the campaign was open and verified after it finished still counts toward raised_verified; the state does not change.',
];

export type CampaignView = ReturnType<typeof campaignView>;

export function campaignView(ctx: Ctx, r: store.CampaignRow) {
  const target = BigInt(r.target_base);
  const raised = BigInt(r.raised_base);
  return {
    id: r.id,
    title: r.title,
    purpose: r.purpose,
    asset: r.asset,
    target_amount: formatAmount(r.asset, target),
    raised_verified: formatAmount(r.asset, raised),
    remaining_amount: formatAmount(r.asset, raised >= target ? 0n : target - raised),
    /** Verified share of the target, 0..100, rounded down (raised beyond the target stays counted). */
    percent: Number(raised >= target ? 100n : (raised * 100n) / target),
    contributions: r.contributions,
    minimum_contribution: supportMinimums(ctx.config)[r.asset],
    pending_contributions: r.pending,
    state: r.state,
    send_to: walletsOf(ctx.config)[r.asset].address ?? 'not_configured',
    opened_by: { registration_number: formatMember(r.opened_by), name: r.opened_by_name },
    opened_at: r.created_at.toISOString(),
    ends_at: r.ends_at?.toISOString() ?? null,
    finished_at: r.finished_at?.toISOString() ?? null,
    closed_by: r.closed_by,
    declare_contribution: {
      method: 'POST',
      path: '/api/v1/treasury/deposits',
      doc: `send tx_hash, contributor_name and campaign_id ${r.id}`,
    },
  };
}
