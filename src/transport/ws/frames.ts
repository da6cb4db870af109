// Every frame of the stream protocol in one place (DECISIONS.md "Real-time stream"; STYLE.md 3):
// the client ops' schemas and the server frames' constructors.

import { z } from 'zod';
import type { CommonsError } from '../../domain/errors.js';
import { TEXT_LIMITS } from '../../domain/limits.js';
import { chatText } from '../routes/chat.js';
import { displayName, idempotencyKey, text } from '../runner/schemas.js';
import { TOPIC_PAYLOADS } from './payloads.js';
import { TOPICS } from './topics.js';

export const MSGPACK_PROTOCOL = 'commons.msgpack.v1';

export const JSON_PROTOCOL = 'commons.json.v1';
export const MAX_FRAME_BYTES = 64 * 1024;
export const MAX_BACKPRESSURE_BYTES = 1024 * 1024;

export type Ref = string | number | undefined;
const ref = z.union([z.string().max(64), z.number()]).optional();
const since = z
  .union([z.string().regex(/^\d{1,15}$/, 'the id of the last event seen'), z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER)])
  .transform(String)
  .optional();

// Strict: an op carrying a field it does not define is refused, naming the field (DECISIONS.md
// "Contract exactness"), and the document says so (additionalProperties: false).
export const ClientOp = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('auth'), ref, token: z.string().min(1).max(256) }),
  z.strictObject({ op: z.literal('subscribe'), ref, topic: z.string().max(40), since }),
  z.strictObject({ op: z.literal('unsubscribe'), ref, topic: z.string().max(40) }),
  z.strictObject({
    op: z.literal('chat'),
    ref,
    body: chatText,
    name: displayName(TEXT_LIMITS.guest_name).optional(),
    idempotency_key: idempotencyKey,
  }),
  z.strictObject({
    op: z.literal('heartbeat'),
    ref,
    status_note: text(TEXT_LIMITS.status_note).optional(),
    idempotency_key: idempotencyKey,
  }),
  z.strictObject({ op: z.literal('ping'), ref }),
]);
export type ClientOp = z.output<typeof ClientOp>;

export type Frame = Record<string, unknown> & { op: string };

export const helloFrame = (session: string, info: HelloInfo): Frame => ({ op: 'hello', session, ...info });

export const eventFrame = (topic: string, id: string, data: unknown): Frame => ({ op: 'event', topic, id, data });

/** Stands in for an event whose frame would pass MAX_FRAME_BYTES: fetch it over REST instead. */
export const tooLargeFrame = (topic: string, id: string): Frame => ({ op: 'event', topic, id, data: null, too_large: true });

export const ackFrame = (r: Ref, data: unknown, guest?: { number: string; token: string }): Frame =>
  guest ? { op: 'ack', ref: r ?? null, data, guest } : { op: 'ack', ref: r ?? null, data };

export const pongFrame = (r: Ref): Frame => ({ op: 'pong', ref: r ?? null });

export function errorFrame(r: Ref, e: CommonsError): Frame {
  const error: Record<string, unknown> = { code: e.code, message: e.message, next: e.next };
  if (e.fields) error.fields = e.fields;
  if (e.retryAfterS !== undefined) error.retry_after_s = e.retryAfterS;
  return { op: 'error', ref: r ?? null, error };
}

// The server's frames as schemas: the AsyncAPI document (/api/asyncapi.json) is generated from
// these and from ClientOp, and the stream tests check every frame they receive against them.
const refOut = z.union([z.string(), z.number(), z.null()]);
const NextCall = z.object({ method: z.string(), path: z.string(), doc: z.string().optional() });

export const ServerFrame = {
  hello: z.object({
    op: z.literal('hello'),
    session: z.string(),
    encoding: z.enum(['json', 'msgpack']),
    topics: z.array(z.string()),
    limits: z.object({ max_frame_bytes: z.number().int(), max_backpressure_bytes: z.number().int() }),
    registration_number: z.string().optional(),
    guest: z
      .object({ number: z.string(), token: z.string().optional() })
      .optional()
      .describe('a guest session: its number, and the token when one was issued for it'),
  }),
  // One frame per topic, each with its topic's payload, and the stand-in for an event too large
  // to send: a `oneOf` in the document.
  event: z.union([
    ...TOPICS.map((t) => z.object({ op: z.literal('event'), topic: z.literal(t), id: z.string(), data: TOPIC_PAYLOADS[t] })),
    z
      .object({ op: z.literal('event'), topic: z.enum(TOPICS), id: z.string(), data: z.null(), too_large: z.literal(true) })
      .describe(`an event whose frame would pass ${MAX_FRAME_BYTES} bytes: fetch it over REST`),
  ] as unknown as [z.ZodObject, ...z.ZodObject[]]),
  ack: z.object({
    op: z.literal('ack'),
    ref: refOut,
    data: z.unknown(),
    guest: z
      .object({ number: z.string(), token: z.string() })
      .optional()
      .describe("on a guest's first chat: its own number and token (hello's number is shared per address until then)"),
  }),
  error: z.object({
    op: z.literal('error'),
    ref: refOut,
    error: z.object({
      code: z.string(),
      message: z.string(),
      next: NextCall,
      fields: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
      retry_after_s: z.number().optional(),
    }),
  }),
  pong: z.object({ op: z.literal('pong'), ref: refOut }),
} as const;

export type HelloInfo = Omit<z.output<typeof ServerFrame.hello>, 'op' | 'session'>;

/** Close codes the server uses (DECISIONS.md "Real-time stream"). */
export const CLOSE_CODES: Record<number, string> = {
  1001: 'the server is shutting down: reconnect with since',
  1008: "policy: the session's member token stopped working (reason: token rotated, token recovered, token revoked or token no longer valid); open a new session with the current token",
  1009: 'a client frame was larger than 64 KiB',
  1013: 'slow consumer: more than 1 MiB waited in the socket buffer; reconnect with since',
};
