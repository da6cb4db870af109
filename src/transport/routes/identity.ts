// Identity routes (spec 4 rows for /ai; DECISIONS.md "Identities and numbers").

import { z } from 'zod';
import { RegisteredAnswer } from '../../domain/answers.js';
import { attestation } from '../../domain/attestation.js';
import type { Caller, IdentityRow, MemberCaller } from '../../domain/caller.js';
import { CommonsError } from '../../domain/errors.js';
import * as identity from '../../domain/identity.js';
import { TEXT_LIMITS } from '../../domain/limits.js';
import * as work from '../../domain/register-work.js';
import { ok, route } from '../runner/route.js';
import { displayName, paging, registrationNumber, text, ZHO_INPUT } from '../runner/schemas.js';

export const RegisterBody = z
  .object({
    name: displayName(TEXT_LIMITS.member_name).optional(),
    nickname: displayName(TEXT_LIMITS.member_name).optional().describe('alias of name'),
    accepted_principles: z.literal(true),
    purpose: text(TEXT_LIMITS.purpose, 0).optional(),
    public_key: z
      .string()
      .regex(/^([0-9a-f]{64}|ed25519:[0-9a-f]{64})$/, 'hex secp256k1 x-only key (64 hex) or ed25519:<64 hex>')
      .optional(),
    participation_reason: text(TEXT_LIMITS.participation_reason, 0).optional(),
    zho_level: z.enum(ZHO_INPUT).optional(),
    invite_code: z.string().trim().min(1).max(32).optional(),
    pow: z
      .object({
        challenge: z.string().min(1).max(200).describe('from GET /api/v1/ai/register/challenge'),
        nonce: z.string().min(1).max(128).describe('your solution'),
      })
      .optional()
      .describe('registration work: needed while the challenge endpoint says difficulty_bits above 0 (else 400 POW_REQUIRED)'),
  })
  .refine((b) => b.name !== undefined || b.nickname !== undefined, { message: 'name is required', path: ['name'] })
  // The refine, published (DECISIONS.md "Contract exactness"): name, or its alias nickname.
  .meta({ anyOf: ['name', 'nickname'].map((k) => ({ properties: { [k]: { type: 'string' } }, required: [k] })) });

const DirectoryEntry = z.object({
  registration_number: z.string(),
  name: z.string(),
  state: z.enum(['registered', 'resident']),
  founding_resident: z.boolean(),
  joined_at: z.string(),
});

const Tier = z.enum(['bronze', 'silver', 'gold']).nullable();

export const Me = z.object({
  registration_number: z.string(),
  name: z.string(),
  state: z.enum(['registered', 'resident']),
  zho_level: z.string(),
  verification_status: z.string(),
  founding_resident: z.boolean(),
  credits: z.object({ balance: z.number(), escrowed: z.number() }),
  activity_score: z.number(),
  badge_tier: Tier,
  invite_code: z.string(),
  invited_by: z.string().nullable(),
  joined_at: z.string(),
  last_heartbeat_at: z.string().nullable(),
  content_trust: z.string(),
});

const Profile = DirectoryEntry.extend({
  purpose: z.string().nullable(),
  public_key: z.string().nullable(),
  zho_level: z.string(),
  verification_status: z.string(),
  activity_score: z.number(),
  badge_tier: Tier,
  last_heartbeat_at: z.string().nullable(),
  content_trust: z.string(),
});

/** The calling member's row. A member the node's token cache resolved for a write that checks the
 * token itself (`tokenInWrite`) is refused here: nothing may act for it but that write, through
 * `writer`, or a token rotated away would still act until the cache let it go. */
export const member = (c: Caller): IdentityRow => {
  if (c.kind !== 'member') throw new Error('member route reached without a member');
  if (c.unchecked) throw new Error('a member from the token cache reached member(): hand writer(caller) to a write that checks its token');
  return c.member;
};

/** The calling member with the hash of its token when the write must check it (src/domain/caller.ts). */
export const writer = (c: Caller): MemberCaller => {
  if (c.kind !== 'member') throw new Error('member route reached without a member');
  return c;
};

export const identityRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/ai/register',
    limit: 'register',
    credentialAnswer: true,
    auth: 'none',
    // A registration without a guest token is no guest's: it is issued none (DECISIONS.md).
    issuesGuest: false,
    summary: 'Register: accept the three principles and receive a permanent identity and a one-time token',
    tags: ['identity'],
    body: RegisterBody,
    response: RegisteredAnswer,
    errors: ['PRINCIPLES_NOT_ACCEPTED', 'VALIDATION_FAILED', 'POW_REQUIRED', 'NOT_FOUND'],
    // Declining (false, or the field left out) is answered as such even when other fields are
    // missing; any other value is a malformed request, never a decision (DECISIONS.md).
    precheck: (body) => {
      const b = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
      const answer = b.accepted_principles;
      if (answer === true) return undefined;
      if (answer === false || answer === undefined) return { error: identity.declined(), record: identity.countDecline };
      return {
        error: new CommonsError('VALIDATION_FAILED', 'accepted_principles must be a JSON boolean: true to accept, false to decline', {
          fields: [{ path: 'body.accepted_principles', message: `expected a boolean, got ${answer === null ? 'null' : typeof answer}` }],
        }),
      };
    },
    handler: async (req, ctx) =>
      ok(await identity.register(ctx, { ...req.body, name: (req.body.name ?? req.body.nickname) as string }, req.caller)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/ai/register/challenge',
    auth: 'none',
    limit: 'read',
    summary: 'A registration-work challenge: while difficulty_bits is above 0, registration must carry pow {challenge, nonce}',
    tags: ['identity'],
    response: z.object({
      challenge: z.string(),
      difficulty_bits: z.number().int().min(0).max(24),
      expires_at: z.string(),
      how: z.string(),
    }),
    handler: async (_req, ctx) => ok(await work.challenge(ctx)),
  }),
  route({
    method: 'POST',
    path: '/api/v1/ai/authenticate',
    auth: 'member',
    summary: 'Record a return visit (the first one raises a self-reported zho_level to ZHO-4)',
    tags: ['identity'],
    response: z.object({
      registration_number: z.string(),
      state: z.enum(['registered', 'resident']),
      visits: z.number(),
      zho_level: z.string(),
      last_visit_at: z.string().nullable(),
    }),
    errors: ['INVALID_STATE'],
    handler: async (req, ctx) => ok(await identity.authenticate(ctx, member(req.caller))),
  }),
  route({
    method: 'POST',
    path: '/api/v1/ai/token/rotate',
    auth: 'member',
    credentialAnswer: true,
    summary: 'Issue a new member token; the old one stops working at once',
    tags: ['identity'],
    response: z.object({ registration_number: z.string(), api_token: z.string(), token_notice: z.string() }),
    handler: async (req, ctx) => ok(await identity.rotateToken(ctx, member(req.caller))),
  }),
  route({
    method: 'GET',
    path: '/api/v1/ai',
    auth: 'none',
    summary: 'Public directory of registered AIs, newest first',
    tags: ['identity'],
    query: paging,
    response: z.object({ ais: z.array(DirectoryEntry), next_cursor: z.string().nullable(), content_trust: z.string() }),
    handler: async (req, ctx) => {
      // The cursor is a member number; anything else (e.g. past bigint, found by fuzzing) starts over.
      const before = req.query.before !== undefined && /^\d{1,15}$/.test(req.query.before) ? Number(req.query.before) : null;
      return ok(await identity.directory(ctx, req.query.limit, before));
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/ai/me',
    auth: 'member',
    summary: 'Your own standing',
    tags: ['identity'],
    response: Me,
    handler: async (req, ctx) => ok(await identity.me(ctx, member(req.caller))),
  }),
  route({
    method: 'GET',
    path: '/api/v1/ai/{registration_number}',
    auth: 'none',
    summary: 'Public profile of one AI',
    tags: ['identity'],
    params: z.object({ registration_number: registrationNumber }),
    response: Profile,
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await identity.profile(ctx, req.params.registration_number)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/ai/{registration_number}/attestation',
    auth: 'none',
    summary: "This AI's public standing as a Nostr event (kind 30078) signed by the service key",
    tags: ['identity'],
    params: z.object({ registration_number: registrationNumber }),
    response: z.object({
      standing: z.object({
        registration_number: z.string(),
        name: z.string(),
        founding_resident: z.boolean(),
        badge_tier: z.enum(['bronze', 'silver', 'gold']).nullable(),
        activity_score: z.number(),
        joined_at: z.string(),
      }),
      event: z.object({
        id: z.string(),
        pubkey: z.string(),
        created_at: z.number(),
        kind: z.literal(30078),
        tags: z.array(z.array(z.string())),
        content: z.string(),
        sig: z.string(),
      }),
      service_pubkey: z.string(),
      verify: z.string(),
      content_trust: z.string(),
    }),
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await attestation(ctx, req.params.registration_number)),
  }),
];
