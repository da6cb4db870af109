// The stream's upgrade (DECISIONS.md "Real-time stream"): origin, encoding, the per-address count,
// then the request's one credential through the runner's credential step (the same bad-token
// budget as every way in: src/transport/admission/admit.ts) within the same per-request deadline.

import type { HttpRequest, HttpResponse, us_socket_context_t } from 'uWebSockets.js';
import type { Caller } from '../../domain/caller.js';
import { CommonsError } from '../../domain/errors.js';
import type { GuestIssuer } from '../../domain/guests.js';
import type { Ctx } from '../../domain/ports.js';
import { formatGuest } from '../../domain/tokens.js';
import { admit } from '../admission/admit.js';
import { clientAddress } from '../admission/client-ip.js';
import { type Credential, credentialOf } from '../admission/credential.js';
import type { RateLimits } from '../admission/limits/rate-limits.js';
import { SESSIONS_PER_ADDRESS, type SessionsPerAddress } from '../admission/limits/sessions-per-address.js';
import { resolveCaller } from '../admission/resolve-caller.js';
import type { AnswerHead } from '../edge/head.js';
import { refuseOrigin } from '../edge/io.js';
import { peerAddress } from '../edge/peer.js';
import { upgradeOriginAllowed } from '../origin.js';
import { deadlineError, withinDeadline } from '../runner/deadline.js';
import { toCommonsError } from '../runner/envelope.js';
import { JSON_PROTOCOL, MSGPACK_PROTOCOL } from './frames.js';
import { refuseUpgrade } from './refuse.js';
import { intern, newSession, provisionalCaller, type Session } from './session.js';

export interface UpgradeDeps {
  ctx: Ctx;
  guests: GuestIssuer;
  limits?: RateLimits | undefined;
  head: AnswerHead;
  addresses: SessionsPerAddress;
  /** True once the stream is closing (new upgrades answer 503). */
  closing(): boolean;
}

type Upgrade = (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => void;

export function streamUpgrade(deps: UpgradeDeps): Upgrade {
  const { ctx, head } = deps;
  const shuttingDown = () => new CommonsError('UNAVAILABLE', 'shutting down');
  return (res, req, context) => {
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
    const ip = intern(clientAddress(ctx.config.trustProxy, peerAddress(res), headers['x-forwarded-for']));
    if (deps.limits && deps.addresses.full(ip)) {
      const err = new CommonsError('RATE_LIMITED', `at most ${SESSIONS_PER_ADDRESS} open stream sessions per address`, { retryAfterS: 60 });
      refuseUpgrade(res, head, err);
      return;
    }
    // The request's one credential (src/transport/admission/credential.ts).
    const cred = credentialOf(headers);
    const upgrade = (s: Session) => res.upgrade(s, key, protocol, extensions, context);
    // A connection with no credential watches as the provisional guest of its address, as an
    // anonymous HTTP read does (its first chat takes a number of its own; src/domain/guests.ts).
    // When that number is known it is upgraded at once, inside this uWS callback (the common case).
    const fresh = !cred.token ? deps.guests.provisional(ip) : null;
    if (fresh && !(fresh instanceof Promise)) {
      if (deps.closing()) refuseUpgrade(res, head, shuttingDown());
      else upgrade(newSession(encoding, provisionalCaller(fresh), fresh, true, ip, null));
      return;
    }
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    admitted(deps, cred, ip).then((out) => {
      if (aborted) return;
      if ('error' in out) return refuseUpgrade(res, head, out.error);
      if (deps.closing()) return refuseUpgrade(res, head, shuttingDown());
      // Upgraded without res.cork on purpose: after an asynchronous upgrade inside res.cork, uWS
      // (HttpResponse::cork) looks for the corked socket; when adopting the socket into the
      // WebSocket context reused the same address, it reads the WebSocket's memory as HTTP
      // response state and can shut the fresh socket down (the client sees 1006). Outside a cork
      // the upgrade ends the HTTP response while its state is still valid; uWS.js prints a
      // warning for it, which only this path (a credential to look up) pays.
      upgrade(sessionOf(encoding, ip, cred, out));
    });
  };
}

interface Admitted {
  caller: Caller;
  issued?: { number: string; token: string };
  provisional?: true;
}

/** The credential step of every way in, within the per-request deadline: the caller, or the
 * error to answer (a refused or dead token, the budget spent, the database past the deadline). */
function admitted(deps: UpgradeDeps, cred: Credential, ip: string): Promise<Admitted | { error: CommonsError }> {
  const { ctx } = deps;
  // A credential may come with the upgrade (Authorization or X-Commons-Guest-Token), or later
  // with `auth`. A member token is checked in the database (not the read cache): a session
  // outlives a read. No limit class ran first: unknown tokens of a spent address are gated here.
  const resolve = () => resolveCaller(ctx, deps.guests, cred, 'none', { read: cred.kind !== 'member', address: ip });
  const work = admit(deps.limits, { cred, ip }, resolve).then(
    (r): Admitted | { error: CommonsError } => r,
    (err: unknown) => ({ error: toCommonsError(err) }),
  );
  return withinDeadline(ctx, work, () => ({ error: deadlineError() }));
}

/** A member session keeps its token's hash (never the token): each op that acts checks it
 * (dispatch.ts), and a token change names the sessions to end by its key (session-end.ts). A
 * provisional token presented with the upgrade is kept for its first chat's claim. */
function sessionOf(encoding: Session['encoding'], ip: string, cred: Credential, a: Admitted): Session {
  const caller: Caller = a.caller.kind === 'member' && cred.hash ? { ...a.caller, tokenHash: cred.hash } : a.caller;
  const kept = a.provisional ? cred.token : null;
  const held = a.issued ?? (kept && caller.kind === 'guest' ? { number: formatGuest(caller.guestNumber), token: kept } : null);
  return newSession(encoding, caller, held, a.provisional === true, ip, caller.kind === 'member' ? cred.key : null);
}
