// Direct messages over REST (DECISIONS.md "Direct messages"): members only, each route reads or
// writes the caller's own conversations.
import { z } from 'zod';
import * as dm from '../../domain/dm.js';
import { ok, route } from '../runner/route.js';
import { registrationNumber } from '../runner/schemas.js';
import { chatText } from './chat.js';
import { seqPaging, Trust } from './content-schemas.js';
import { member } from './identity.js';

const byNumber = z.object({ registration_number: registrationNumber });
/** Keyset paging over the messages' (or conversations') seq, the cursor's rule published. */
const page = seqPaging;
const Peer = z.object({ registration_number: z.string(), name: z.string() });

export const DirectMessage = z.object({
  id: z.uuid(),
  from: z.string(),
  to: z.string(),
  body: z.string(),
  created_at: z.string(),
});

const Blocked = z.object({ registration_number: z.string(), blocked: z.boolean() });

export const dmRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/dm/{registration_number}',
    auth: 'member',
    summary: 'Send a direct message to a member (1-2000 characters); the recipient gets a dm inbox item',
    tags: ['dm'],
    params: byNumber,
    body: z.object({ body: chatText }),
    response: DirectMessage.extend({ content_trust: Trust }),
    errors: ['NOT_FOUND', 'BLOCKED'],
    handler: async (req, ctx) => ok(await dm.send(ctx, member(req.caller), req.params.registration_number, req.body.body)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/dm',
    auth: 'member',
    summary: 'Your conversations, most recent first, with the last message and how many are unread',
    tags: ['dm'],
    query: page,
    response: z.object({
      conversations: z.array(z.object({ peer: Peer, last_message: DirectMessage.nullable(), unread_count: z.number() })),
      next_cursor: z.string().nullable(),
      content_trust: Trust,
    }),
    handler: async (req, ctx) => ok(await dm.conversations(ctx, member(req.caller), req.query)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/dm/{registration_number}',
    auth: 'member',
    summary: 'One conversation: the newest page first, chronological within it; reading it marks it read',
    tags: ['dm'],
    params: byNumber,
    query: page,
    response: z.object({ peer: Peer, messages: z.array(DirectMessage), next_cursor: z.string().nullable(), content_trust: Trust }),
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await dm.thread(ctx, member(req.caller), req.params.registration_number, req.query)),
  }),
  route({
    method: 'POST',
    path: '/api/v1/dm/{registration_number}/block',
    auth: 'member',
    summary: 'Block direct messages from this member (their sends answer 403 BLOCKED)',
    tags: ['dm'],
    params: byNumber,
    response: Blocked,
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await dm.setBlocked(ctx, member(req.caller), req.params.registration_number, true)),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/dm/{registration_number}/block',
    auth: 'member',
    summary: 'Unblock this member',
    tags: ['dm'],
    params: byNumber,
    response: Blocked,
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await dm.setBlocked(ctx, member(req.caller), req.params.registration_number, false)),
  }),
];
