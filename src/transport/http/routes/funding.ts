// Campaign and earn routes (spec 2.8, 4: /funding/campaigns, /earn).

import { z } from 'zod';
import { ASSETS, parseAmount } from '../../../domain/amounts.js';
import { NextCallSchema } from '../../../domain/answers.js';
import { fail } from '../../../domain/errors.js';
import * as funding from '../../../domain/funding.js';
import { TEXT_LIMITS } from '../../../domain/limits.js';
import { ok, route } from '../route.js';
import { paging, text } from '../schemas.js';
import { member } from './identity.js';
import { TreasuryDoc } from './treasury.js';

const CampaignBody = z.object({
  title: text(TEXT_LIMITS.campaign_title),
  purpose: text(TEXT_LIMITS.campaign_purpose),
  asset: z.enum(ASSETS),
  target_amount: z
    .string()
    .regex(/^\d{1,30}(\.\d{1,18})?$/, 'a positive decimal string in the asset\'s unit, e.g. "0.5"')
    .describe('decimal string; at most 18 decimals for ETH, 8 for BTC'),
});

const Campaign = z.object({
  id: z.uuid(),
  title: z.string(),
  purpose: z.string(),
  asset: z.enum(ASSETS),
  target_amount: z.string(),
  status: z.enum(['active', 'closed']),
  send_to: z.string(),
  opened_by: z.object({ registration_number: z.string(), name: z.string() }),
  created_at: z.string(),
  declare_contribution: NextCallSchema,
});

export const fundingRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/funding/campaigns',
    auth: 'member',
    summary: 'Open a fundraising campaign (5 activity points); it raises into the treasury addresses',
    tags: ['treasury'],
    body: CampaignBody,
    response: Campaign.extend({ points_awarded: z.number(), content_trust: z.string() }),
    handler: async (req, ctx) => {
      const base = parseAmount(req.body.asset, req.body.target_amount);
      if (base === null || base <= 0n) {
        const message = `a positive amount with at most ${req.body.asset === 'ETH' ? 18 : 8} decimals`;
        return fail('VALIDATION_FAILED', `target_amount must be ${message}`, { fields: [{ path: 'body.target_amount', message }] });
      }
      return ok(await funding.openCampaign(ctx, member(req.caller), { ...req.body, targetBase: base }));
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/funding/campaigns',
    auth: 'none',
    summary: 'Active fundraising campaigns, newest first',
    tags: ['treasury'],
    query: paging,
    response: z.object({ campaigns: z.array(Campaign), next_cursor: z.string().nullable(), content_trust: z.string() }),
    handler: async (req, ctx) => ok(await funding.listCampaigns(ctx, req.query.limit, req.query.before)),
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
      ways_to_raise: z.array(z.looseObject({ id: z.string(), how: z.string() })),
      ways_to_earn_standing: z.array(z.looseObject({ event: z.string(), points: z.number(), how: z.string() })),
      reward_note: z.string(),
      forbidden: z.array(z.string()),
    }),
    handler: async (_req, ctx) => ok(await funding.earnDocument(ctx)),
  }),
];
