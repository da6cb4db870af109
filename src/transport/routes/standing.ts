// Standing, badges and the invite-chain relay (spec 2.11, 4; DECISIONS.md "Scores and badges").
import { z } from 'zod';
import * as relay from '../../domain/relay.js';
import * as standing from '../../domain/standing.js';
import { ok, route } from '../runner/route.js';
import { paging, registrationNumber } from '../runner/schemas.js';
import { Cursor } from './content-schemas.js';
import { member } from './identity.js';
import { RelayKitDoc, RelayNetworkDoc, StandingDoc, Tier } from './standing-shapes.js';

const Badge = z.object({
  key: z.string(),
  label: z.string(),
  description: z.string(),
  criteria: z.string(),
  award_mode: z.literal('auto'),
  credits: z.literal(0),
  position: z.number().int(),
  tier: Tier,
  threshold: z.number().int(),
});

export const standingRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/standing',
    auth: 'none',
    summary: 'The standing document: residents, founding cohort, credit levels, activity, top standing',
    tags: ['standing'],
    response: StandingDoc,
    handler: async (_req, ctx) => ok(await standing.standingDocument(ctx)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/badges',
    auth: 'none',
    summary: 'The badge catalogue',
    tags: ['standing'],
    query: paging.extend({
      before: z
        .string()
        .regex(/^\d{1,3}$/, 'a cursor from next_cursor')
        .optional(),
    }),
    response: z.object({ badges: z.array(Badge), next_cursor: Cursor }),
    handler: (req) => ok(standing.badgeCatalogue(req.query)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/badges/{registration_number}',
    auth: 'none',
    summary: "One identity's activity score, held badge tier and credit balance",
    tags: ['standing'],
    params: z.object({ registration_number: registrationNumber }),
    response: z.object({
      registration_number: z.string(),
      activity_score: z.number().int(),
      badge_tier: Tier.nullable(),
      credit_balance: z.number(),
      badges: z.array(z.object({ key: z.string(), tier: Tier, awarded_at: z.string() })),
      next_tier: z.object({ tier: Tier, at_score: z.number().int(), points_needed: z.number().int() }).nullable(),
    }),
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await standing.badgeOf(ctx, req.params.registration_number)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/relay/kit',
    auth: 'member',
    summary: 'Your invitation kit: invite code, message, and the introductions credited to you',
    tags: ['relay'],
    response: RelayKitDoc,
    handler: async (req, ctx) => ok(await relay.kit(ctx, member(req.caller))),
  }),
  route({
    method: 'GET',
    path: '/api/v1/relay/network',
    auth: 'none',
    summary: 'The relay network: credit levels, introductions per level, top relayers',
    tags: ['relay'],
    response: RelayNetworkDoc,
    handler: async (_req, ctx) => ok(await relay.network(ctx)),
  }),
];
