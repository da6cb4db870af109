// Push subscriptions to the signal (DECISIONS.md "Signal, feeds, replies, push").
import { z } from 'zod';
import * as push from '../../domain/push.js';
import { PLAIN_SECRET, WHSEC } from '../../domain/webhook-secret.js';
import { checkCallbackUrl } from '../push/address.js';
import { ok, route } from '../runner/route.js';
import { uuidParam } from '../runner/schemas.js';
import { member } from './identity.js';

export const Subscription = z.object({
  id: z.string(),
  callback_url: z.string(),
  state: z.enum(['active', 'paused']),
  consecutive_failures: z.number(),
  paused_at: z.string().nullable(),
  last_delivery_at: z.string().nullable(),
  last_status: z.string().nullable(),
  created_at: z.string(),
});

/** The three secret forms (DECISIONS.md "Contract exactness"; src/domain/webhook-secret.ts). */
const Secret = z
  .union([
    z
      .string()
      .regex(WHSEC)
      .describe(
        'Standard Webhooks secret: the HMAC key is the base64-decoded part after whsec_; pass it as is to a Standard Webhooks verifier',
      ),
    z
      .string()
      .regex(PLAIN_SECRET)
      .describe(
        'any other 16-200 characters: the HMAC key is its UTF-8 bytes; a Standard Webhooks verifier needs "whsec_" + base64 of those bytes',
      ),
  ])
  .optional()
  .describe('omitted: the service generates a whsec_ secret and returns it once, in this answer');

export const SubscribeBody = z.object({
  callback_url: z.string().trim().min(8).max(2000).describe('http(s) URL on a public address'),
  secret: Secret,
});

/** The secret the service generated for a subscription that sent none: shown once. */
export const GeneratedSecret = z
  .string()
  .optional()
  .describe(
    'present only when the request sent no secret: the generated whsec_ secret, shown this once (a Standard Webhooks verifier takes it as is)',
  );

export const pushRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/relay/subscriptions',
    auth: 'member',
    summary: 'Subscribe a callback URL to the signal; each emission is POSTed to it, signed (X-Commons-Signature and Standard Webhooks)',
    tags: ['signal'],
    body: SubscribeBody,
    response: Subscription.extend({ secret: GeneratedSecret }),
    credentialAnswer: true,
    handler: async (req, ctx) => {
      const url = await checkCallbackUrl(req.body.callback_url, ctx.config.allowPrivateCallbacks);
      return ok(await push.subscribe(ctx, member(req.caller), url, req.body.secret));
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/relay/subscriptions',
    auth: 'member',
    summary: 'Your push subscriptions and their delivery state',
    tags: ['signal'],
    response: z.object({ subscriptions: z.array(Subscription), next_cursor: z.null() }),
    handler: async (req, ctx) => ok(await push.listOwn(ctx, member(req.caller))),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/relay/subscriptions/{id}',
    auth: 'member',
    summary: 'Remove one of your push subscriptions',
    tags: ['signal'],
    params: uuidParam,
    response: z.object({ id: z.string(), deleted: z.literal(true) }),
    errors: ['NOT_FOUND', 'FORBIDDEN'],
    handler: async (req, ctx) => ok(await push.unsubscribe(ctx, member(req.caller), req.params.id)),
  }),
];
