// The WebSocket endpoint /api/v1/stream on the same uWS app (DECISIONS.md "Real-time stream"):
// upgrade (credentials and encoding), session lifecycle, the slow-consumer and liveness sweep.
// The only code that touches uWS WebSocket handlers (STYLE.md 1).

import type { HttpRequest, HttpResponse, TemplatedApp, us_socket_context_t } from 'uWebSockets.js';
import { randomUUID } from 'node:crypto';
import type { Caller } from '../../domain/caller.js';
import { CommonsError } from '../../domain/errors.js';
import type { GuestIssuer } from '../../domain/guests.js';
import type { Ctx } from '../../domain/ports.js';
import { formatGuest, formatMember, hashToken, MEMBER_PREFIX, tokenKeyOfHash } from '../../domain/tokens.js';
import { answerHead } from '../edge/head.js';
import { refuseOrigin, writeHead } from '../http/uws.js';
import { upgradeOriginAllowed } from '../origin.js';
import { clientAddress } from '../runner/client-ip.js';
import { checkCredential } from '../runner/credential.js';
import { errorBody, STATUS_OF, toCommonsError } from '../runner/envelope.js';
import { ipKey, type RateLimits } from '../runner/limits/rate-limits.js';
import { bearerOf, presentedToken, resolveCaller } from '../runner/resolve-caller.js';
import { uWS } from '../uws-build.js';
import { decode } from './codec.js';
import { type DispatchEnv, dispatch } from './dispatch.js';
import { Fanout } from './fanout.js';
import {
  errorFrame,
  type HelloInfo,
  helloFrame,
  JSON_PROTOCOL,
  MAX_BACKPRESSURE_BYTES,
  MAX_FRAME_BYTES,
  MSGPACK_PROTOCOL,
} from './frames.js';
import { InboxHub } from './inbox-hub.js';
import type { StreamOps } from './ops.js';
import { intern, newSession, provisionalCaller, type Session, type Socket, send } from './session.js';
import { SessionEnds } from './session-end.js';
import { type FeedRegistry, MEMBER_TOPICS, TOPICS } from './topics.js';

export const STREAM_PATH = '/api/v1/stream';

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

// The slow-consumer rule is enforced by a sweep, so the close carries 1013; uWS's own limit sits
// well above it only as a memory backstop between sweeps.
const SWEEP_MS = 100;
// 16x: wide enough that a sweep delayed by a busy event loop still finds the consumer first.
const HARD_BACKPRESSURE = 16 * MAX_BACKPRESSURE_BYTES;

/** Open sessions one address may hold on a node while limits are on (DECISIONS.md "Reliability
 * promises"): past it the upgrade answers 429 before any credential is looked up. */
export const SESSIONS_PER_ADDRESS = 64;

export function mountStream(app: TemplatedApp, deps: StreamDeps): Stream {
  const { ctx } = deps;
  const sockets = new Set<Socket>();
  const fanout = new Fanout(app, ctx.bus, deps.feeds, (s) => ctx.metrics.fanoutWaitSeconds.observe(s));
  const inbox = new InboxHub(ctx);
  let closing = false;
  const perAddress = new Map<string, number>();
  const head = answerHead(ctx.config);
  // A member whose token was rotated, recovered or revoked is cut off on every node with 1008
  // (src/transport/ws/session-end.ts); the close also drops its uWS topic subscriptions.
  const ends = new SessionEnds(ctx, sockets);
  const env: DispatchEnv = { ctx, guests: deps.guests, ops: deps.ops, fanout, inbox, limits: deps.limits, ends };

  app.ws<Session>(STREAM_PATH, {
    // Frames up to twice the limit are read and refused with 1009 (message too big); anything
    // larger is cut off by uWS itself without reading it.
    maxPayloadLength: 2 * MAX_FRAME_BYTES,
    maxBackpressure: HARD_BACKPRESSURE,
    closeOnBackpressureLimit: true,
    idleTimeout: 0,
    sendPingsAutomatically: false,
    compression: uWS.DISABLED,
    upgrade: (res, req, context) => upgrade(res, req, context),
    open: (ws) => {
      sockets.add(ws);
      const a = ipKey(ws.getUserData().ip);
      perAddress.set(a, (perAddress.get(a) ?? 0) + 1);
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
        send(ws, errorFrame(undefined, toCommonsError(err)));
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
      const a = ipKey(s.ip);
      const left = (perAddress.get(a) ?? 1) - 1;
      if (left > 0) perAddress.set(a, left);
      else perAddress.delete(a);
      if (s.replaying) for (const t of s.replaying.keys()) fanout.unwatch(t, s);
      s.replaying = null;
      inbox.unsubscribe(ws);
      if (sockets.delete(ws)) ctx.metrics.wsSessions.dec();
    },
  });

  function upgrade(res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
    const headers: Record<string, string> = {};
    req.forEach((k, v) => {
      headers[k] = v;
    });
    // A browser page from an origin not allowed (STREAM_ALLOWED_ORIGINS) is refused before anything else.
    if (!upgradeOriginAllowed(headers.origin, ctx.config.streamAllowedOrigins)) {
      refuseOrigin(res, head, headers.origin);
      return;
    }
    const key = headers['sec-websocket-key'] ?? '';
    const extensions = headers['sec-websocket-extensions'] ?? '';
    const offered = (headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
    const encoding = offered.includes(MSGPACK_PROTOCOL) ? 'msgpack' : 'json';
    const protocol = encoding === 'msgpack' ? MSGPACK_PROTOCOL : offered.includes(JSON_PROTOCOL) ? JSON_PROTOCOL : '';
    const ip = intern(
      clientAddress(ctx.config.trustProxy, Buffer.from(res.getRemoteAddressAsText()).toString(), headers['x-forwarded-for']),
    );
    if (deps.limits && (perAddress.get(ipKey(ip)) ?? 0) >= SESSIONS_PER_ADDRESS) {
      res.cork(() => {
        writeHead(res, 429, head).writeHeader('content-type', 'application/json; charset=utf-8').writeHeader('retry-after', '60');
        const err = new CommonsError('RATE_LIMITED', `at most ${SESSIONS_PER_ADDRESS} open stream sessions per address`, {
          retryAfterS: 60,
        });
        res.end(errorBody(err, ''));
      });
      return;
    }
    const bearer = bearerOf(headers);
    const presented = presentedToken(headers);
    // A member session keeps its token's hash (never the token): each op that acts checks it
    // (dispatch.ts), and a token change names the sessions to end by its key (session-end.ts).
    const session = (caller: Caller, issued: Session['issued'], provisional: boolean): Session => {
      const c: Caller = caller.kind === 'member' && presented ? { ...caller, tokenHash: hashToken(presented) } : caller;
      return newSession(encoding, c, issued, provisional, ip, c.kind === 'member' && c.tokenHash ? tokenKeyOfHash(c.tokenHash) : null);
    };
    // A connection with no credential watches as the provisional guest of its address, as an
    // anonymous HTTP read does (its first chat takes a number of its own; src/domain/guests.ts).
    // When that number is known it is upgraded at once, inside this uWS callback (the common case).
    const fresh = !bearer && !headers['x-commons-guest-token'] ? deps.guests.provisional(ip) : null;
    if (fresh && !(fresh instanceof Promise)) {
      if (closing) {
        refuse(res, 503, 'UNAVAILABLE');
        return;
      }
      res.upgrade(session(provisionalCaller(fresh), fresh, true), key, protocol, extensions, context);
      return;
    }
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    // A credential may come with the upgrade (Authorization or X-Commons-Guest-Token), or later
    // with `auth`.
    // A member token is checked in the database (not the read cache): a session outlives a read.
    // The same bad-token budget as over HTTP (src/transport/runner/credential.ts).
    const resolve = () => resolveCaller(ctx, deps.guests, headers, 'none', { read: !presented?.startsWith(MEMBER_PREFIX), address: ip });
    checkCredential(deps.limits, { token: presented, ip, gate: true }, resolve).then(
      ({ caller, issued, provisional }) => {
        if (aborted) return;
        if (closing) return refuse(res, 503, 'UNAVAILABLE');
        // Upgraded without res.cork on purpose: after an asynchronous upgrade inside res.cork, uWS
        // (HttpResponse::cork) looks for the corked socket; when adopting the socket into the
        // WebSocket context reused the same address, it reads the WebSocket's memory as HTTP
        // response state and can shut the fresh socket down (the client sees 1006). Outside a cork
        // the upgrade ends the HTTP response while its state is still valid; uWS.js prints a
        // warning for it, which only this path (a credential to look up) pays.
        // A provisional token presented with the upgrade is kept for its first chat's claim.
        const presented = provisional ? (bearer ?? headers['x-commons-guest-token']) : undefined;
        const held =
          issued ?? (presented && caller.kind === 'guest' ? { number: formatGuest(caller.guestNumber), token: presented } : null);
        res.upgrade(session(caller, held, provisional === true), key, protocol, extensions, context);
      },
      (err: unknown) => {
        if (aborted) return;
        const e = toCommonsError(err);
        res.cork(() => {
          writeHead(res, STATUS_OF[e.code], head).writeHeader('content-type', 'application/json; charset=utf-8');
          if (e.retryAfterS !== undefined) res.writeHeader('retry-after', String(e.retryAfterS));
          res.end(errorBody(e, ''));
        });
      },
    );
  }

  function refuse(res: HttpResponse, status: number, code: 'UNAVAILABLE'): void {
    res.cork(() => {
      writeHead(res, status, head).writeHeader('content-type', 'application/json; charset=utf-8');
      res.end(JSON.stringify({ success: false, error: { code, message: 'shutting down' }, timestamp: new Date().toISOString() }));
    });
  }

  // Slow consumers (over 1 MiB buffered) are closed with 1013 "try again later"; a socket that
  // answered nothing for a whole ping period is dead and is dropped.
  const pingEvery = Math.max(1, Math.round((ctx.config.streamPingIntervalS * 1000) / SWEEP_MS));
  let ticks = 0;
  let slowClosed = 0;
  const sweep = setInterval(() => {
    const ping = ++ticks % pingEvery === 0;
    // Once a ping period, every member session's token is checked again (a lost bus message).
    if (ping) void ends.recheck();
    for (const ws of sockets) {
      const s = ws.getUserData();
      if (ws.getBufferedAmount() > MAX_BACKPRESSURE_BYTES) {
        s.open = false;
        slowClosed++;
        // Outside any uWS callback (a timer): written inside the socket's own cork.
        ws.cork(() => ws.end(1013, 'slow consumer: backpressure over 1 MiB'));
        continue;
      }
      if (!ping) continue;
      if (!s.alive) {
        ws.close();
        continue;
      }
      s.alive = false;
      ws.ping();
    }
  }, SWEEP_MS);
  sweep.unref();

  return {
    fanout,
    sessionCount: () => sockets.size,
    slowConsumersClosed: () => slowClosed,
    backpressure: () => ({ bytes: [...sockets].map((ws) => ws.getBufferedAmount()), sweeps: ticks }),
    close(code, reason) {
      closing = true;
      clearInterval(sweep);
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
