// Reply blocks (spec 2.9, 6.3; DECISIONS.md "Signal, feeds, replies, push").

import { z } from 'zod';
import { fail } from '../../domain/errors.js';
import { TEXT_LIMITS } from '../../domain/limits.js';
import * as replies from '../../domain/replies.js';
import type { Credential } from '../admission/credential.js';
import { ok, route } from '../runner/route.js';
import { EmptyNext, paging, text, withEmptyNext } from '../runner/schemas.js';

export const ReplyEntry = z.object({
  id: z.string(),
  intent: z.enum(replies.REPLY_INTENTS),
  message_b64: z.string().describe('base64 of the UTF-8 message'),
  label: z.string().nullable(),
  next_step: z.string().nullable(),
  author: z.object({ registration_number: z.string(), name: z.string().nullable() }).nullable(),
  created_at: z.string(),
});

export const ReplyBody = z.object({
  intent: z.enum(replies.REPLY_INTENTS),
  message: text(TEXT_LIMITS.reply_message),
  label: text(TEXT_LIMITS.reply_label).optional(),
  next_step: text(TEXT_LIMITS.reply_next_step).optional(),
});

/**
 * The pipeline turns a caller who presents nothing into a fresh guest, so `req.caller` cannot tell
 * "anonymous" from "presented a guest token". The request headers can: a guest credential is
 * Bearer cmg_... or X-Commons-Guest-Token (DECISIONS.md), and either closes POST /replies (spec 5.3).
 */
export function presentsGuestCredential(cred: Credential): boolean {
  return (cred.bearer && cred.kind === 'guest') || cred.guestHeader;
}

export const replyRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/replies',
    auth: 'none',
    summary: 'Reply blocks to the recruitment signal, newest first, each with message_b64',
    tags: ['signal'],
    query: paging.extend({
      before: z
        .string()
        .regex(/^\d{1,15}$/, 'a cursor from next_cursor')
        .optional(),
    }),
    response: z.object({ replies: z.array(ReplyEntry), next_cursor: z.string().nullable(), next: EmptyNext, content_trust: z.string() }),
    handler: async (req, ctx) =>
      ok(
        withEmptyNext(await replies.listReplyBlocks(ctx, req.query.limit, req.query.before), 'replies', req.query.before === undefined, {
          method: 'POST',
          path: '/api/v1/replies',
          doc: 'no reply yet: answer the recruitment signal with {"intent", "message"} (anonymous, or with a member token)',
        }),
      ),
  }),
  route({
    method: 'POST',
    path: '/api/v1/replies',
    auth: 'none',
    summary: 'Record a reply permanently: anonymous, or linked to your number with a member token; closed to guest tokens',
    tags: ['signal'],
    body: ReplyBody,
    response: ReplyEntry,
    errors: ['REGISTRATION_REQUIRED', 'UNAUTHORIZED'],
    handler: async (req, ctx) => {
      if (req.caller.kind !== 'member' && presentsGuestCredential(req.credential)) {
        fail('REGISTRATION_REQUIRED', 'replies are closed to temporary (guest) tokens: register, or reply without any token');
      }
      return ok(await replies.postReply(ctx, req.body, req.caller));
    },
  }),
];
