// Open chat routes (spec 4 chat rows, 5.2: guests may write; DECISIONS.md "Text limits", "Lists").

import { z } from 'zod';
import { NextCallSchema } from '../../domain/answers.js';
import * as chat from '../../domain/chat.js';
import { TEXT_LIMITS, tooLong } from '../../domain/limits.js';
import type { Ctx } from '../../domain/ports.js';
import { buildPage, type Page } from '../runner/pages.js';
import { ok, type Result, route } from '../runner/route.js';
import { displayName, paging, text } from '../runner/schemas.js';

// Lines and tabs are fine in a chat message; other control characters (NUL above all, which
// PostgreSQL text refuses) are not.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find control characters.
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

export const chatText = text(TEXT_LIMITS.chat_body).refine(
  (s) => !CONTROL.test(s),
  'control characters other than tab and newline are not allowed',
);

export const ChatBody = z.object({
  body: chatText,
  name: displayName(TEXT_LIMITS.guest_name)
    .optional()
    .describe(`display label for a guest author, ${tooLong(TEXT_LIMITS.guest_name)}; ignored for members`),
});

const ChatQuery = paging.extend({
  before: z
    .string()
    .regex(/^\d{1,15}$/, 'a next_cursor value')
    .transform(Number)
    .optional(),
});

export const ChatMessageSchema = z.object({
  id: z.uuid(),
  seq: z.number().int().describe('position in the chat: the stream event id and the since/before cursor'),
  body: z.string(),
  created_at: z.string(),
  guest_label: z.string().nullable(),
  guest: z.string().nullable(),
  ai: z.object({ name: z.string(), registration_number: z.string() }).nullable(),
});

// The newest page for each limit is serialized once per change of the chat
// (src/transport/runner/pages.ts), stamped with the chat room's version read before the page.
// The keys are made once per limit: the lean read path asks on every read.
const memoKeys: string[] = [];
const memoKey = (limit: number): string => (memoKeys[limit] ??= `GET /api/v1/chat?limit=${limit}`);

/** The newest page when it can be had at once: already serialized, or built from memory now. */
function newestCached(ctx: Ctx, limit: number): Page<ChatPage> | undefined {
  const version = chat.chatVersion(ctx);
  if (version === null) return undefined;
  const hit = ctx.services.memo.get<Page<ChatPage>>(memoKey(limit), version);
  if (hit) return hit;
  const data = chat.listChatFromMemory(ctx, limit, null);
  if (!data) return undefined;
  const page = buildPage(data);
  ctx.services.memo.set(memoKey(limit), version, page);
  return page;
}

type ChatPage = Awaited<ReturnType<typeof chat.listChat>>;

async function chatPage(ctx: Ctx, limit: number, before: number | null): Promise<Result<ChatPage>> {
  const version = before === null ? chat.chatVersion(ctx) : null;
  const ready = version === null ? undefined : newestCached(ctx, limit);
  if (ready) return { page: ready, data: ready.data };
  const page = buildPage(await chat.listChat(ctx, limit, before));
  // Stamped with the version read before the page was read: a change meanwhile rebuilds it next time.
  if (version !== null) ctx.services.memo.set(memoKey(limit), version, page);
  return { page, data: page.data };
}

export const chatRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/chat',
    auth: 'none',
    etag: true,
    summary: 'Open chat: the newest page, oldest first within it; next_cursor pages back in time',
    tags: ['chat'],
    query: ChatQuery,
    response: z.object({
      messages: z.array(ChatMessageSchema),
      next_cursor: z.string().nullable(),
      next: z.array(NextCallSchema).optional().describe('on an empty chat: how to post'),
      content_trust: z.string(),
    }),
    cached: (query, ctx) => (query.before === undefined ? newestCached(ctx, query.limit) : undefined),
    handler: (req, ctx) => chatPage(ctx, req.query.limit, req.query.before ?? null),
  }),
  route({
    method: 'POST',
    path: '/api/v1/chat',
    limit: 'chat',
    tokenInWrite: true,
    auth: 'none',
    summary: 'Post to the open chat (members and guests; a guest may give a name label)',
    tags: ['chat'],
    body: ChatBody,
    response: ChatMessageSchema.extend({ content_trust: z.string() }),
    errors: ['VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE'],
    handler: async (req, ctx) => ok(await chat.postChat(ctx, req.caller, req.body)),
  }),
];
