// The campaign record and the `treasury` stream topic's events as zod schemas (docs/treasury.md
// "Campaigns"): the REST routes publish the record (OpenAPI), the AsyncAPI document the events,
// and the tests check what they receive against both.
import { z } from 'zod';
import { CAMPAIGN_STATES } from '../machines/campaign.js';
import { ASSETS } from './amounts.js';
import { NextCallSchema } from './answers.js';

const Amount = z.string().describe("decimal string in the asset's own unit, exact");

export const CampaignSchema = z.object({
  id: z.uuid(),
  title: z.string(),
  purpose: z.string(),
  asset: z.enum(ASSETS),
  target_amount: Amount,
  raised_verified: Amount.describe('the exact sum of verified deposits reported for it (beyond the target too)'),
  remaining_amount: Amount.describe('what the target still lacks; "0" once reached'),
  percent: z.number().int().min(0).max(100).describe('raised_verified as a whole percent of the target, rounded down, at most 100'),
  contributions: z
    .number()
    .int()
    .describe('verified deposits counted: those of at least minimum_contribution (a smaller one adds its amount to raised_verified only)'),
  minimum_contribution: Amount.describe(
    'the least verified amount that counts as a contribution and earns treasury_support points (TREASURY_SUPPORT_MIN_ETH / _BTC)',
  ),
  pending_contributions: z.number().int().describe('deposits reported for it and not verified yet: never counted until verified'),
  state: z.enum(CAMPAIGN_STATES),
  send_to: z.string(),
  opened_by: z.object({ registration_number: z.string(), name: z.string() }),
  opened_at: z.string(),
  ends_at: z.string().nullable(),
  finished_at: z.string().nullable().describe('when it was funded, ended or closed; null while open'),
  closed_by: z.string().nullable().describe("who closed it: the opener's registration number, or operator"),
  declare_contribution: NextCallSchema,
});

export const CAMPAIGN_EVENT_KINDS = [
  'campaign_opened',
  'campaign_contribution',
  'campaign_funded',
  'campaign_ended',
  'campaign_closed',
] as const;

/** A verified deposit as the treasury feed lists it (GET /api/v1/treasury/deposits). */
export const DepositFeedEntrySchema = z.object({
  id: z.uuid(),
  name: z.string(),
  amount: Amount,
  asset: z.enum(ASSETS),
  time: z.string(),
  tx_hash: z.string(),
  on_behalf_of: z.string().nullable(),
  campaign_id: z.string().nullable(),
});

/** The data of an event on the `treasury` topic: a verified deposit, or a campaign's change. */
export const TreasuryEventSchema = z.union([
  DepositFeedEntrySchema.extend({ kind: z.literal('deposit_verified') }),
  z.object({ kind: z.enum(CAMPAIGN_EVENT_KINDS), campaign: CampaignSchema }),
]);
