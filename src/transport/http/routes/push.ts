// Push subscriptions to the signal (DECISIONS.md "Signal, feeds, replies, push").
import { z } from 'zod';
import * as push from '../../../domain/push.js';
import { checkCallbackUrl } from '../../push/address.js';
import { ok, route } from '../route.js';
import { uuidParam } from '../schemas.js';
import { member } from './identity.js';

const Subscription = z.object({
  id: z.string(),
  callback_url: z.string(),
  state: z.enum(['active', 'paused']),
  consecutive_failures: z.number(),
  paused_at: z.string().nullable(),
  last_delivery_at: z.string().nullable(),
  last_status: z.string().nullable(),
  created_at: z.string(),
});

export const SubscribeBody = z.object({
  callback_url: z.string().trim().min(8).max(2000).describe('http(s) URL on a public address'),
  secret: z.string().min(16).max(200).describe('HMAC key; the signatures are keyed by its UTF-8 bytes'),
});

export const pushRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/relay/subscriptions',
    auth: 'member',
    summary: 'Subscribe a callback URL to the signal; each emission is POSTed to it, signed (X-Commons-Signature and Standard Webhooks)',
    tags: ['signal'],
    body: SubscribeBody,
    response: Subscription,
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
