// The one dispatch point for client ops (STYLE.md 3): validate the frame with its schema, then one
// small handler per op. Every op may carry `ref`; the answer is ack {ref, data} or error {ref, error}.
import { randomUUID } from 'node:crypto';
import { CommonsError, deadMemberToken, fail } from '../../domain/errors.js';
import { claimToken, type GuestIssuer } from '../../domain/guests.js';
import { memberOfTokenHash } from '../../domain/identity.js';
import type { Ctx } from '../../domain/ports.js';
import { formatGuest, formatMember } from '../../domain/tokens.js';
import { admit } from '../admission/admit.js';
import { credentialOfToken } from '../admission/credential.js';
import { IDEMPOTENCY_HEADER } from '../admission/idempotent.js';
import { fieldIssues } from '../admission/issues.js';
import type { RateLimits } from '../admission/limits/rate-limits.js';
import { spendOp } from '../admission/limits/sessions-per-address.js';
import { resolveCaller } from '../admission/resolve-caller.js';
import { deadlineError, withinDeadline } from '../runner/deadline.js';
import { toCommonsError } from '../runner/envelope.js';
import { runOperation } from '../runner/operation.js';
import type { AnyRoute } from '../runner/route.js';
import type { Fanout } from './fanout.js';
import { ackFrame, ClientOp, errorFrame, type Frame, pongFrame, type Ref } from './frames.js';
import type { InboxHub } from './inbox-hub.js';
import type { StreamOps } from './ops.js';
import { type Socket, send } from './session.js';
import { DEAD_TOKEN_REASON, type SessionEnds } from './session-end.js';
import { leave, subscribe, unsubscribe } from './subscribe.js';
import { MEMBER_TOPICS } from './topics.js';

export interface DispatchEnv {
  ctx: Ctx;
  guests: GuestIssuer;
  /** The operations chat and heartbeat run (src/transport/ws/ops.ts). */
  ops: StreamOps;
  fanout: Fanout;
  /** The per-session topic `inbox`. */
  inbox: InboxHub;
  limits?: RateLimits | undefined;
  /** Ends sessions whose token died (session-end.ts). */
  ends: SessionEnds;
}

const refOf = (raw: unknown): Ref => {
  const r = raw !== null && typeof raw === 'object' ? (raw as { ref?: unknown }).ref : undefined;
  return typeof r === 'string' || typeof r === 'number' ? r : undefined;
};

export async function dispatch(env: DispatchEnv, ws: Socket, raw: unknown): Promise<void> {
  const r = refOf(raw);
  try {
    const parsed = ClientOp.safeParse(raw);
    if (!parsed.success) {
      const fields = fieldIssues(parsed.error.issues, 'op');
      fail('VALIDATION_FAILED', `invalid frame: ${fields.map((f) => f.path).join(', ')}`, { fields });
      return;
    }
    const op = parsed.data;
    // Like every limit, off with RATE_LIMITS=off (tests and benchmarks).
    const wait = env.limits ? spendOp(ws.getUserData(), Date.now()) : null;
    if (wait !== null) {
      return send(
        ws,
        errorFrame(r, new CommonsError('RATE_LIMITED', `too many ops on this session; wait ${wait} s`, { retryAfterS: wait })),
      );
    }
    // Answered at once: nothing to wait for.
    if (op.op === 'ping') return send(ws, pongFrame(r));
    if (op.op === 'unsubscribe') return send(ws, ackFrame(r, unsubscribe(env, ws, op.topic)));
    // An op that waits answers within the per-request deadline, as every way in does
    // (src/transport/runner/deadline.ts): past it, while the database is down or stuck, the op is
    // answered UNAVAILABLE and its late outcome is dropped (an `auth` then changes nothing).
    const run: Run = { late: false };
    const frame = await withinDeadline<Frame | null | typeof LATE>(env.ctx, waiting(env, ws, r, op, run), () => {
      run.late = true;
      return LATE;
    });
    if (frame === LATE) throw deadlineError();
    if (frame) send(ws, frame);
  } catch (err) {
    const e = toCommonsError(err);
    if (e.code === 'INTERNAL') env.ctx.log.error({ err }, 'stream op failed');
    send(ws, errorFrame(r, e));
    // A member's op refused for its token (the check below, or chat's own statement): the token
    // died, and the session it opened ends (the error is sent first).
    const s = ws.getUserData();
    if (e.code === 'UNAUTHORIZED' && s.caller.kind === 'member' && refOp(raw) !== 'auth') env.ends.end(ws, 1008, DEAD_TOKEN_REASON);
  }
}

/** One op's run: `late` once the deadline answered for it. */
interface Run {
  late: boolean;
}

const LATE: unique symbol = Symbol('late');

type WaitingOp = Exclude<ClientOp, { op: 'ping' | 'unsubscribe' }>;

/** The frame answering an op that waits (null: the op sent its own answer, a subscribe). */
async function waiting(env: DispatchEnv, ws: Socket, r: Ref, op: WaitingOp, run: Run): Promise<Frame | null> {
  switch (op.op) {
    case 'auth':
      return ackFrame(r, await auth(env, ws, op.token, run));
    case 'subscribe':
      await stillValid(env, ws);
      await subscribe(env, ws, r, op.topic, op.since, run);
      return null;
    case 'chat': {
      // A provisional guest's first write owns its number first (told in the ack).
      const owned = await ownNumber(env, ws);
      return ackFrame(r, await runAs(env, ws, env.ops.chat, { body: op.body, name: op.name }, op.idempotency_key), owned);
    }
    case 'heartbeat':
      await stillValid(env, ws);
      return ackFrame(r, await runAs(env, ws, env.ops.heartbeat, { status_note: op.status_note }, op.idempotency_key));
  }
}

export { REPLAY_MAX } from './subscribe.js';

const refOp = (raw: unknown): unknown => (raw !== null && typeof raw === 'object' ? (raw as { op?: unknown }).op : undefined);

/**
 * A member session's token must still name its member when an op that acts runs, as every HTTP
 * write asks the database (DECISIONS.md "Identities and numbers"): checked through the node's
 * grouped token checks, so a rotation committed on any node refuses the next op at once, before
 * its bus message arrives. Chat needs no check of its own: its statement checks the hash.
 */
async function stillValid(env: DispatchEnv, ws: Socket): Promise<void> {
  const c = ws.getUserData().caller;
  if (c.kind !== 'member' || c.tokenHash === undefined) return;
  let now: { id: number } | null;
  try {
    now = await memberOfTokenHash(env.ctx, c.tokenHash);
  } catch (err) {
    // A check that cannot be made does not refuse: the token was valid when last checked, and no
    // change of it commits without the database; the bus and the re-check end the session once
    // one is known (heartbeats keep going through a database outage, docs/stream.md).
    env.ctx.log.debug({ err }, 'stream: token check failed; the op goes on');
    return;
  }
  if (now?.id !== c.member.id) deadMemberToken();
}

/** A provisional guest's first write: its own number and token, told in the ack. */
async function ownNumber(env: DispatchEnv, ws: Socket): Promise<{ number: string; token: string } | undefined> {
  const s = ws.getUserData();
  if (!s.provisional || s.caller.kind !== 'guest' || !s.issued) return undefined;
  // The session's provisional token claims its number, as its first write over HTTP would.
  const own = await claimToken(env.ctx, env.guests, s.issued.token, s.caller.guestNumber);
  s.caller = { kind: 'guest', guestNumber: own.guestNumber };
  s.provisional = false;
  s.issued = null;
  return { number: own.number, token: own.token };
}

/** Runs an operation as the session's caller: the same limits, validation and use case as over
 * REST (chat counts against the limits of POST /api/v1/chat; DECISIONS.md "Rate limits"). */
async function runAs(env: DispatchEnv, ws: Socket, route: AnyRoute, body: unknown, key: string | undefined): Promise<unknown> {
  const s = ws.getUserData();
  const subject = {
    member: s.caller.kind === 'member' ? s.memberKey : null,
    guest: s.caller.kind === 'guest' ? s.caller.guestNumber : null,
    ip: s.ip,
  };
  const headers: Record<string, string> = key === undefined ? {} : { [IDEMPOTENCY_HEADER]: key };
  const call = { route, body: { value: body }, headers, ip: s.ip, requestId: randomUUID(), session: { caller: s.caller, subject } };
  const result = await runOperation(env, call, { headers: {} });
  return 'data' in result ? result.data : null;
}

async function auth(env: DispatchEnv, ws: Socket, token: string, run: Run) {
  const s = ws.getUserData();
  // The runner's credential step (src/transport/admission/admit.ts), as for a write: a provisional
  // guest claims its number first, so the session writes as its own guest; the same bad-token
  // budget as every way in. A member's caller carries its token's hash, checked before each op
  // that acts (never the token).
  const cred = credentialOfToken(token);
  const resolve = () => resolveCaller(env.ctx, env.guests, cred, 'none', { session: true });
  const { caller } = await admit(env.limits, { cred, ip: s.ip }, resolve);
  if (!s.open || run.late) return null;
  // Another identity's session leaves the inbox it had joined (each session sees only its own).
  if (caller.kind !== 'member' || s.caller.kind !== 'member' || caller.member.id !== s.caller.member.id) env.inbox.unsubscribe(ws);
  s.caller = caller;
  s.issued = null;
  s.provisional = false;
  s.memberKey = caller.kind === 'member' ? cred.key : null;
  if (caller.kind === 'member') return { registration_number: formatMember(caller.member.id) };
  // A session that is no longer a member's leaves the member-only topics.
  for (const t of MEMBER_TOPICS) leave(env, ws, t);
  return { guest: formatGuest(caller.guestNumber) };
}
