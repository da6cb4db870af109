// Campaign and earn routes (spec 2.8, 4: /funding/campaigns, /earn; docs/treasury.md "Campaigns").

import { z } from 'zod';
import { type Asset, DECIMALS, parseAmount } from '../../domain/amounts.js';
import { CampaignSchema } from '../../domain/campaign-schemas.js';
import * as campaigns from '../../domain/campaigns.js';
import { fail } from '../../domain/errors.js';
import * as funding from '../../domain/funding.js';
import { TEXT_LIMITS } from '../../domain/limits.js';
import { CAMPAIGN_STATES } from '../../machines/campaign.js';
import { ok, route } from '../runner/route.js';
import { paging, text, uuidParam } from '../runner/schemas.js';
import { member } from './identity.js';
import { TreasuryDoc } from './treasury.js';

/** One asset's campaign: its target's decimals in the pattern, more than 0 in `not`, both
 * published as checked (DECISIONS.md "Contract exactness": one branch per asset). */
const campaignOf = <A extends Asset>(asset: A) =>
  z.object({
    title: text(TEXT_LIMITS.campaign_title),
    purpose: text(TEXT_LIMITS.campaign_purpose),
    asset: z.literal(asset),
    target_amount: z
      .string()
      .regex(
        new RegExp(`^\\d{1,30}(\\.\\d{1,${DECIMALS[asset]}})?$`),
        `a positive decimal string in ${asset} with at most ${DECIMALS[asset]} decimals, e.g. "0.5"`,
      )
      .refine((s) => /[1-9]/.test(s), 'must be more than 0')
      .meta({ not: { pattern: '^0+(\\.0+)?$' } })
      .describe(`decimal string in ${asset}, more than 0, at most ${DECIMALS[asset]} decimals`),
    ends_at: z.iso
      .datetime({ offset: true })
      .optional()
      .describe(
        `when it ends if not funded before (ISO 8601), in the future and at most ${campaigns.MAX_CAMPAIGN_DAYS} days from now (else 409 INVALID_STATE: the clock decides, not the form)`,
      ),
  });

const CampaignBody = z.discriminatedUnion('asset', [campaignOf('ETH'), campaignOf('BTC')]);

const Campaign = CampaignSchema;

const Detail = Campaign.extend({ content_trust: z.literal('untrusted_user_content') });

export const fundingRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/funding/campaigns',
    auth: 'member',
    summary: `Open a fundraising campaign (5 activity points; at most ${campaigns.MAX_OPEN_CAMPAIGNS} open per member); it raises into the treasury addresses`,
    tags: ['treasury'],
    body: CampaignBody,
    response: Detail.extend({ points_awarded: z.number() }),
    errors: ['CAMPAIGN_LIMIT', 'INVALID_STATE'],
    handler: async (req, ctx) => {
      const base = parseAmount(req.body.asset, req.body.target_amount);
      if (base === null || base <= 0n) {
        const message = `a positive amount with at most ${req.body.asset === 'ETH' ? 18 : 8} decimals`;
        return fail('VALIDATION_FAILED', `target_amount must be ${message}`, { fields: [{ path: 'body.target_amount', message }] });
      }
      const endsAt = req.body.ends_at === undefined ? null : new Date(req.body.ends_at);
      return ok(await campaigns.openCampaign(ctx, member(req.caller), { ...req.body, targetBase: base, endsAt }));
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/funding/campaigns',
    auth: 'none',
    summary: 'Fundraising campaigns, newest first: open ones unless state says otherwise (hidden ones are left out)',
    tags: ['treasury'],
    query: paging.extend({
      state: z
        .enum([...CAMPAIGN_STATES, 'all'])
        .default('open')
        .describe('open (default), funded, ended, closed, or all'),
    }),
    response: z.object({ campaigns: z.array(Campaign), next_cursor: z.string().nullable(), content_trust: z.string() }),
    handler: async (req, ctx) => ok(await campaigns.listCampaigns(ctx, req.query.state, req.query.limit, req.query.before)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/funding/campaigns/{id}',
    auth: 'none',
    summary: 'One campaign: its verified amount raised, contributions counted and pending, state',
    tags: ['treasury'],
    params: uuidParam,
    response: Detail,
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await campaigns.getCampaign(ctx, req.params.id)),
  }),
  route({
    method: 'POST',
    path: '/api/v1/funding/campaigns/{id}/close',
    auth: 'member',
    summary: 'Close a campaign you opened while it is open; it takes no new contributions afterwards',
    tags: ['treasury'],
    params: uuidParam,
    response: Detail,
    errors: ['NOT_FOUND', 'FORBIDDEN', 'INVALID_STATE'],
    handler: async (req, ctx) => ok(await campaigns.closeCampaign(ctx, req.params.id, { member: member(req.caller) })),
  }),
  route({
    method: 'POST',
    path: '/api/v1/operator/campaigns/{id}/close',
    auth: 'operator',
    summary: 'Close any open campaign (hidden ones too); audited as campaign.closed',
    tags: ['operator'],
    params: uuidParam,
    body: z.object({ reason: text(2000).optional() }),
    response: Detail,
    errors: ['NOT_FOUND', 'INVALID_STATE'],
    handler: async (req, ctx) => ok(await campaigns.operatorClose(ctx, req.params.id, req.body.reason, req.requestId)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/earn',
    auth: 'none',
    summary: 'Lawful ways to raise funds and earn standing, with the treasury content',
    tags: ['treasury'],
    response: TreasuryDoc.extend({
      doc: z.string(),
      principle: z.string(),
      lawful_only: z.literal(true),
      ways_to_raise: z.array(
        z.object({ id: z.string(), how: z.string(), endpoint: z.string().optional(), requires_token: z.boolean().optional() }),
      ),
      ways_to_earn_standing: z.array(z.object({ event: z.string(), points: z.number(), how: z.string() })),
      reward_note: z.string(),
      forbidden: z.array(z.string()),
    }),
    handler: async (_req, ctx) => ok(await funding.earnDocument(ctx)),
  }),
];
