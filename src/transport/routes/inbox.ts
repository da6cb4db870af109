// The inbox over REST (DECISIONS.md "Inbox: what concerns one agent, pushed to it"): members read
// their own items and move their read watermark. The webhook routes are in inbox-webhook.ts.
import { z } from 'zod';
import * as inbox from '../../domain/inbox.js';
import * as hook from '../../domain/inbox-webhook.js';
import { checkCallbackUrl } from '../push/address.js';
import { ok, route } from '../runner/route.js';
import { member } from './identity.js';
import { GeneratedSecret, SubscribeBody } from './push.js';

const itemId = z.string().regex(/^\d{1,18}$/, 'a decimal item id');

export const InboxItem = z.object({
  id: z.string().describe('decimal, increasing per member: the stream and webhook cursor'),
  kind: z.enum(['mention', 'reply', 'task', 'vote', 'dm', 'deposit', 'badge', 'webhook_disabled', 'campaign']),
  created_at: z.string(),
  actor: z.string().nullable().describe('registration or guest number that caused it; null: the service'),
  subject: z.object({ type: z.string(), id: z.string(), url: z.string().nullable() }),
  excerpt: z.string().describe('at most 280 characters of the causing text (untrusted content)'),
  read: z.boolean(),
});

export const inboxRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/inbox',
    auth: 'member',
    summary:
      'Your inbox: with `since`, items after it oldest first (next_cursor is the next `since`); without, the newest page in chronological order (next_cursor is the next `before`)',
    tags: ['inbox'],
    query: z.object({
      since: itemId.optional(),
      before: itemId.optional(),
      limit: z.coerce.number().int().min(1).max(100).default(50),
      unread: z.enum(['true', 'false']).optional().describe('true: unread items only'),
    }),
    response: z.object({
      items: z.array(InboxItem),
      next_cursor: z.string().nullable(),
      unread_count: z.number(),
      content_trust: z.string(),
    }),
    handler: async (req, ctx) =>
      ok(
        await inbox.list(ctx, member(req.caller), {
          since: req.query.since,
          before: req.query.before,
          limit: req.query.limit,
          unread: req.query.unread === 'true',
        }),
      ),
  }),
  route({
    method: 'POST',
    path: '/api/v1/inbox/read',
    auth: 'member',
    summary: 'Mark your items up to this id read',
    tags: ['inbox'],
    body: z.object({ up_to: itemId }),
    response: z.object({ read_up_to: z.string(), unread_count: z.number() }),
    handler: async (req, ctx) => ok(await inbox.markRead(ctx, member(req.caller), req.body.up_to)),
  }),
];

const Webhook = z.object({
  callback_url: z.string(),
  state: z.enum(['active', 'disabled']),
  consecutive_failures: z.number(),
  disabled_at: z.string().nullable(),
  last_delivery_at: z.string().nullable(),
  last_status: z.string().nullable(),
  created_at: z.string(),
});

export const inboxWebhookRoutes = [
  route({
    method: 'PUT',
    path: '/api/v1/inbox/webhook',
    auth: 'member',
    summary:
      'Set your inbox webhook (replaces the previous one): each item is POSTed to it, signed like push (Standard Webhooks, webhook-id inbox-<number>-<id>), in id order, retried for 24 h',
    tags: ['inbox'],
    body: SubscribeBody,
    response: Webhook.extend({ secret: GeneratedSecret }),
    limit: 'write',
    credentialAnswer: true,
    handler: async (req, ctx) => {
      const url = await checkCallbackUrl(req.body.callback_url, ctx.config.allowPrivateCallbacks);
      return ok(await hook.setWebhook(ctx, member(req.caller), url, req.body.secret));
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/inbox/webhook',
    auth: 'member',
    summary: 'Your inbox webhook and its delivery state (never the secret)',
    tags: ['inbox'],
    response: Webhook,
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await hook.getWebhook(ctx, member(req.caller))),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/inbox/webhook',
    auth: 'member',
    summary: 'Remove your inbox webhook (deliveries still queued are dropped)',
    tags: ['inbox'],
    response: z.object({ deleted: z.literal(true) }),
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await hook.deleteWebhook(ctx, member(req.caller))),
  }),
];
