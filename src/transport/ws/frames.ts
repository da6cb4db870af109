// Every frame of the stream protocol in one place (DECISIONS.md "Real-time stream"; STYLE.md 3):
// the client ops' schemas and the server frames' constructors.
import { z } from 'zod';
import type { CommonsError } from '../../domain/errors.js';
import { chatText } from '../http/routes/chat.js';
import { displayName, text } from '../http/schemas.js';

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

export const ClientOp = z.discriminatedUnion('op', [
  z.object({ op: z.literal('auth'), ref, token: z.string().min(1).max(256) }),
  z.object({ op: z.literal('subscribe'), ref, topic: z.string().max(40), since }),
  z.object({ op: z.literal('unsubscribe'), ref, topic: z.string().max(40) }),
  z.object({ op: z.literal('chat'), ref, body: chatText, name: displayName(40).optional() }),
  z.object({ op: z.literal('heartbeat'), ref, status_note: text(140).optional() }),
  z.object({ op: z.literal('ping'), ref }),
]);
export type ClientOp = z.output<typeof ClientOp>;

export type Frame = Record<string, unknown> & { op: string };

export const helloFrame = (session: string, info: Record<string, unknown>): Frame => ({ op: 'hello', session, ...info });

export const eventFrame = (topic: string, id: string, data: unknown): Frame => ({ op: 'event', topic, id, data });

/** Stands in for an event whose frame would pass MAX_FRAME_BYTES: fetch it over REST instead. */
export const tooLargeFrame = (topic: string, id: string): Frame => ({ op: 'event', topic, id, data: null, too_large: true });

export const ackFrame = (r: Ref, data: unknown): Frame => ({ op: 'ack', ref: r ?? null, data });

export const pongFrame = (r: Ref): Frame => ({ op: 'pong', ref: r ?? null });

export function errorFrame(r: Ref, e: CommonsError): Frame {
  const error: Record<string, unknown> = { code: e.code, message: e.message, next: e.next };
  if (e.fields) error.fields = e.fields;
  if (e.retryAfterS !== undefined) error.retry_after_s = e.retryAfterS;
  return { op: 'error', ref: r ?? null, error };
}
