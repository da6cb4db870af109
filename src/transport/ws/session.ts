// A stream session (uWS typed UserData) and the single send point where frames are encoded.

import type { WebSocket } from 'uWebSockets.js';
import type { Caller } from '../../domain/caller.js';
import type { IssuedGuest } from '../../domain/guests.js';
import type { BusMessage } from '../../domain/ports.js';
import type { Bucket } from '../admission/limits/bucket.js';
import { byteLength, type Encoding, encode } from './codec.js';
import { type Frame, MAX_FRAME_BYTES, tooLargeFrame } from './frames.js';

// Every field is set when the session is made (stream.ts), so each session keeps one shape and
// no property store of its own: an idle connection's memory is mostly this object (BENCHMARKS.md).
export interface Session {
  encoding: Encoding;
  caller: Caller;
  /** A guest identity issued for this connection, announced in hello. */
  issued: { number: string; token: string } | null;
  /** The guest number is the provisional one of the peer's address, shared with its other readers:
   * the first chat claims it or takes one of its own (src/domain/guests.ts). */
  provisional: boolean;
  open: boolean;
  /** Seen a pong or a frame since the last ping. */
  alive: boolean;
  /** The peer address and the member token's counting key (never the token): for rate limits. */
  ip: string;
  memberKey: string | null;
  /** Topics being replayed, with the live events that arrived meanwhile (created on the first
   * replay: most sessions never replay, and an idle session should cost little memory). */
  replaying: Map<string, BusMessage[]> | null;
  /** The session's op budget (admission/limits/sessions-per-address.ts), created at its first op. */
  budget: Bucket | null;
}

export type Socket = WebSocket<Session>;

/** A session with every field set at once (one shape for all sessions). */
export function newSession(
  encoding: Encoding,
  caller: Caller,
  issued: Session['issued'],
  provisional: boolean,
  ip: string,
  memberKey: string | null,
): Session {
  return { encoding, caller, issued, provisional, open: true, alive: true, ip, memberKey, replaying: null, budget: null };
}

// Sessions from one address share its string, and the provisional guest's sessions share one
// caller (callers are replaced, never changed in place): less memory per idle connection.
const addresses = new Map<string, string>();
export function intern(ip: string): string {
  const known = addresses.get(ip);
  if (known !== undefined) return known;
  if (addresses.size >= 10_000) addresses.clear();
  addresses.set(ip, ip);
  return ip;
}
const callers = new WeakMap<IssuedGuest, Caller>();
export function provisionalCaller(g: IssuedGuest): Caller {
  let c = callers.get(g);
  if (!c) {
    c = { kind: 'guest', guestNumber: g.guestNumber };
    callers.set(g, c);
  }
  return c;
}

export const uwsTopic = (topic: string, enc: Encoding): string => `${topic}|${enc}`;

/** The one place a frame is encoded and written to one socket. */
export function send(ws: Socket, frame: Frame): void {
  const s = ws.getUserData();
  if (!s.open) return;
  let payload = encode(frame, s.encoding);
  if (byteLength(payload) > MAX_FRAME_BYTES && frame.op === 'event') {
    payload = encode(tooLargeFrame(String(frame.topic), String(frame.id)), s.encoding);
  }
  ws.send(payload, s.encoding === 'msgpack');
}
