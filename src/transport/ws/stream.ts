// The WebSocket endpoint /api/v1/stream on the same uWS app (DECISIONS.md "Real-time stream"):
// the session lifecycle. The upgrade (upgrade.ts), the ops (dispatch.ts), the per-address count
// (../admission/limits/sessions-per-address.ts), the topic ops (subscribe.ts), the sweep (sweep.ts) and the refused upgrade's answer (refuse.ts) are their own
// files. The only code that touches uWS WebSocket handlers (STYLE.md 1).

import type { TemplatedApp } from 'uWebSockets.js';
import { randomUUID } from 'node:crypto';
import type { GuestIssuer } from '../../domain/guests.js';
import type { Ctx } from '../../domain/ports.js';
import { formatGuest, formatMember } from '../../domain/tokens.js';
import type { RateLimits } from '../admission/limits/rate-limits.js';
import { sessionsPerAddress } from '../admission/limits/sessions-per-address.js';
import { answerHead } from '../edge/head.js';
import { STREAM_PATH } from '../paths.js';
import { toCommonsError } from '../runner/envelope.js';
import { uWS } from '../uws-build.js';
import { decode } from './codec.js';
import { type DispatchEnv, dispatch } from './dispatch.js';
import { Fanout } from './fanout.js';
import { errorFrame, type HelloInfo, helloFrame, MAX_BACKPRESSURE_BYTES, MAX_FRAME_BYTES } from './frames.js';
import { InboxHub } from './inbox-hub.js';
import type { StreamOps } from './ops.js';
import { type Session, type Socket, send } from './session.js';
import { SessionEnds } from './session-end.js';
import { startSweep } from './sweep.js';
import { type FeedRegistry, MEMBER_TOPICS, TOPICS } from './topics.js';
import { streamUpgrade } from './upgrade.js';

export { SESSIONS_PER_ADDRESS } from '../admission/limits/sessions-per-address.js';

export interface StreamDeps {
  ctx: Ctx;
  guests: GuestIssuer;
  feeds: FeedRegistry;
  ops: StreamOps;
  /** The HTTP pipeline's limiter, so stream chat counts against the same limits (absent: off). */
  limits?: RateLimits | undefined;
}

export interface Stream {
  readonly fanout: Fanout;
  sessionCount(): number;
  /** Sessions closed with 1013 for passing the backpressure bound, since start. */
  slowConsumersClosed(): number;
  /** Bytes waiting in each open session's socket buffer, and the sweeps run since start (the
   * slow-consumer threshold's test reads both). */
  backpressure(): { bytes: number[]; sweeps: number };
  /** Closes every session with `code` (1001 on shutdown) and stops the sweep. */
  close(code: number, reason: string): void;
}

// 16x: wide enough that a sweep delayed by a busy event loop still finds the consumer first.
const HARD_BACKPRESSURE = 16 * MAX_BACKPRESSURE_BYTES;

export function mountStream(app: TemplatedApp, deps: StreamDeps): Stream {
  const { ctx } = deps;
  const sockets = new Set<Socket>();
  const fanout = new Fanout(app, ctx.bus, deps.feeds, (s) => ctx.metrics.fanoutWaitSeconds.observe(s));
  const inbox = new InboxHub(ctx);
  let closing = false;
  const addresses = sessionsPerAddress();
  // A member whose token was rotated, recovered or revoked is cut off on every node with 1008
  // (src/transport/ws/session-end.ts); the close also drops its uWS topic subscriptions.
  const ends = new SessionEnds(ctx, sockets);
  const env: DispatchEnv = { ctx, guests: deps.guests, ops: deps.ops, fanout, inbox, limits: deps.limits, ends };
  const upgrade = streamUpgrade({
    ctx,
    guests: deps.guests,
    limits: deps.limits,
    head: answerHead(ctx.config),
    addresses,
    closing: () => closing,
  });

  app.ws<Session>(STREAM_PATH, {
    // Frames up to twice the limit are read and refused with 1009 (message too big); anything
    // larger is cut off by uWS itself without reading it.
    maxPayloadLength: 2 * MAX_FRAME_BYTES,
    maxBackpressure: HARD_BACKPRESSURE,
    closeOnBackpressureLimit: true,
    idleTimeout: 0,
    sendPingsAutomatically: false,
    compression: uWS.DISABLED,
    upgrade,
    open: (ws) => {
      sockets.add(ws);
      addresses.add(ws.getUserData().ip);
      ctx.metrics.wsSessions.inc();
      const s = ws.getUserData();
      send(ws, helloFrame(randomUUID(), helloInfo(s)));
      // The issued guest token is told once, in hello; the session keeps only a provisional one,
      // which its first chat claims a number for (src/domain/guests.ts).
      if (!s.provisional) s.issued = null;
    },
    message: (ws, data, isBinary) => {
      const s = ws.getUserData();
      s.alive = true;
      if (data.byteLength > MAX_FRAME_BYTES) {
        s.open = false;
        ws.end(1009, 'frames are at most 64 KiB');
        return;
      }
      let raw: unknown;
      try {
        raw = decode(data, isBinary);
      } catch (err) {
        const e = toCommonsError(err);
        send(ws, errorFrame(undefined, e));
        // A text frame must be UTF-8 (RFC 6455 8.1): told, then closed 1007.
        if (!isBinary && e.code === 'VALIDATION_FAILED') {
          s.open = false;
          ws.end(1007, 'text frames must be UTF-8');
        }
        return;
      }
      void dispatch(env, ws, raw);
    },
    pong: (ws) => {
      ws.getUserData().alive = true;
    },
    close: (ws) => {
      const s = ws.getUserData();
      s.open = false;
      addresses.give(s.ip);
      if (s.replaying) for (const t of s.replaying.keys()) fanout.unwatch(t, s);
      s.replaying = null;
      inbox.unsubscribe(ws);
      if (sockets.delete(ws)) ctx.metrics.wsSessions.dec();
    },
  });

  const sweep = startSweep(ctx, sockets, ends);

  return {
    fanout,
    sessionCount: () => sockets.size,
    slowConsumersClosed: () => sweep.slowClosed(),
    backpressure: () => ({ bytes: [...sockets].map((ws) => ws.getBufferedAmount()), sweeps: sweep.ticks() }),
    close(code, reason) {
      closing = true;
      sweep.stop();
      ends.close();
      for (const ws of [...sockets]) {
        ws.getUserData().open = false;
        ws.end(code, reason);
      }
      fanout.close();
      inbox.close();
    },
  };
}

function helloInfo(s: Session): HelloInfo {
  const info: HelloInfo = {
    encoding: s.encoding,
    topics: TOPICS.filter((t) => !MEMBER_TOPICS.has(t) || s.caller.kind === 'member'),
    limits: { max_frame_bytes: MAX_FRAME_BYTES, max_backpressure_bytes: MAX_BACKPRESSURE_BYTES },
  };
  if (s.caller.kind === 'member') info.registration_number = formatMember(s.caller.member.id);
  // Only what the frame's schema says: the issued guest may carry the issuer's own fields.
  if (s.caller.kind === 'guest')
    info.guest = s.issued ? { number: s.issued.number, token: s.issued.token } : { number: formatGuest(s.caller.guestNumber) };
  return info;
}
