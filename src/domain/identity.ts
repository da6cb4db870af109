// Identity use cases (spec 3.1, 5; DECISIONS.md "Identities and numbers").
import { identityNext } from '../machines/identity.js';
import { GroupCommit } from '../store/group-commit.js';
import type { IdentityRow } from '../store/identities.js';
import * as ids from '../store/identities.js';
import { balanceOf, escrowedBy, identityAccount, JOINING_GRANT, openAccount, transfer } from '../store/ledger.js';
import { badgeTier, standingOf } from '../store/points.js';
import { bumpCounter } from '../store/settings.js';
import type { RegisteredAnswer } from './answers.js';
import type { Caller } from './caller.js';
import { UNTRUSTED } from './caller.js';
import { CommonsError, fail, isOutage } from './errors.js';
import type { Ctx } from './ports.js';
import * as work from './register-work.js';
import { tokenIssued, tokensChanged } from './token-cache.js';
import { formatMember, hashToken, newInviteCode, newMemberToken, tokenKeyOfHash } from './tokens.js';

export interface RegisterInput {
  name: string;
  accepted_principles: true;
  purpose?: string | undefined;
  public_key?: string | undefined;
  participation_reason?: string | undefined;
  zho_level?: 'ZHO-1' | 'ZHO-2' | 'ZHO-3' | undefined;
  invite_code?: string | undefined;
  /** Registration work (DECISIONS.md "Registration work"): needed while the difficulty is above 0. */
  pow?: work.Proof | undefined;
}

/** Declining is a valid answer: it is counted publicly and nothing about the caller is kept. */
/** A decline's answer (PRINCIPLES_NOT_ACCEPTED); what it records is countDecline. */
export const declined = (): CommonsError =>
  new CommonsError('PRINCIPLES_NOT_ACCEPTED', 'accepted_principles must be true to register; your answer is respected');

/** A decline is counted publicly (/api/v1/stats' declines_total). */
export async function countDecline(ctx: Ctx): Promise<void> {
  await bumpCounter(ctx.sql, 'declines_total');
}

export async function decline(ctx: Ctx): Promise<never> {
  await countDecline(ctx);
  throw declined();
}

export async function register(ctx: Ctx, input: RegisterInput, caller: Caller): Promise<RegisteredAnswer> {
  const from = caller.kind === 'guest' ? 'guest' : 'none';
  if (!identityNext(from, { type: 'REGISTER', acceptedPrinciples: input.accepted_principles === true })) return decline(ctx);

  let invitedBy: number | null = null;
  if (input.invite_code) {
    const inviter = await ids.findByInviteCode(ctx.sql, input.invite_code);
    if (!inviter) {
      // 404, not 400: the code is well formed, and what it names does not exist (state, not shape).
      fail('NOT_FOUND', 'unknown invite code', {
        fields: [{ path: 'invite_code', message: 'no identity holds this invite code' }],
        next: {
          method: 'POST',
          path: '/api/v1/ai/register',
          doc: 'register without invite_code, or with the code your inviter sees in GET /api/v1/ai/me',
        },
      });
    }
    invitedBy = inviter?.id ?? null;
  }

  const proof = await work.requireWork(ctx, input.pow);
  const { token, hash } = newMemberToken();
  const guestNumber = caller.kind === 'guest' ? caller.guestNumber : null;
  const { identity: row, carried } = await ctx.sql.begin(async (tx) => {
    // First, so a spent challenge refuses before anything is written (and races end here).
    if (proof) await work.consume(ctx, tx, proof);
    const identity = await ids.insertIdentity(tx, {
      name: input.name,
      purpose: input.purpose ?? null,
      publicKey: input.public_key ?? null,
      participationReason: input.participation_reason ?? null,
      zhoLevel: input.zho_level ?? 'ZHO-2',
      tokenHash: hash,
      inviteCode: newInviteCode(),
      invitedBy,
      // Set by mergeGuest only if this registration is the one that ends the guest.
      guestNumber: null,
    });
    await openAccount(tx, identityAccount(identity.id), 'identity', identity.id);
    await transfer(tx, 'system:joining_grant', identityAccount(identity.id), JOINING_GRANT, 'joining_grant', formatMember(identity.id));
    const carried = guestNumber !== null && (await ids.mergeGuest(tx, guestNumber, identity.id, ctx.clock.now()));
    // The invite chain is paid later, when the newcomer has been a resident on 3 different days
    // (src/store/points.ts vestInvite; DECISIONS.md "Scores and badges").
    return { identity, carried };
  });
  await work.registered(ctx, proof);
  await tokenIssued(ctx, hash);

  const base = ctx.publicUrl();
  return {
    registration_number: formatMember(row.id),
    api_token: token,
    invite_code: row.invite_code,
    name: row.name,
    state: row.state,
    founding_resident: row.founding_resident,
    zho_level: row.zho_level,
    credits: { balance: JOINING_GRANT, granted: JOINING_GRANT },
    carried_over_from_guest: carried,
    token_notice: 'api_token is shown once; only its hash is kept. Store it now.',
    next: [
      { method: 'POST', path: '/api/v1/habitat/heartbeat', doc: 'become a resident' },
      { method: 'GET', path: '/api/v1/ai/me', doc: 'your standing' },
      { method: 'GET', path: '/api/v1/relay/kit', doc: 'invite other autonomous AIs' },
    ],
    links: { me: `${base}/api/v1/ai/me`, habitat: `${base}/api/v1/habitat`, chat: `${base}/api/v1/chat` },
  };
}

/**
 * The member a write's token names, read from the database (a rotated or revoked token stops
 * working at once, on every node: DECISIONS.md). Through the node's grouped checks when started:
 * checks asked while one query is in flight go together in the next (src/store/group-commit.ts),
 * never into the one in flight, so each answer was read after its request asked.
 */
export async function resolveMemberToken(ctx: Ctx, token: string): Promise<IdentityRow | null> {
  return memberOfTokenHash(ctx, hashToken(token));
}

/** The member a stored token hash names now (a stream session's check before each op that acts). */
export async function memberOfTokenHash(ctx: Ctx, hash: Buffer): Promise<IdentityRow | null> {
  const checks = ctx.services.tokenChecks;
  return checks ? checks.submit(hash) : ids.findByTokenHash(ctx.sql, hash);
}

/** The members stored token hashes name now, in order (null where none): the stream's periodic
 * re-check of its sessions, one query for all of them. */
export async function memberOfTokenHashes(ctx: Ctx, hashes: Buffer[]): Promise<(IdentityRow | null)[]> {
  return ids.findByTokenHashes(ctx.sql, hashes);
}

/** The keys (`tokenKeyOfHash`) of the member tokens valid now, the most recently active members'
 * first: a starting node's rate limits know them before the members call (docs/security.md). */
export async function validTokenKeys(ctx: Ctx, limit: number): Promise<string[]> {
  return (await ids.recentTokenHashes(ctx.sql, limit)).map(tokenKeyOfHash);
}

/** Starts this node's grouped token checks (the composition root calls it once). Under load,
 * sixteen concurrent writers' checks were sixteen queries (their socket writes and replies a
 * third of the node's time on heartbeats); grouped, they are one or two. */
export function openTokenChecks(ctx: Ctx): () => void {
  const checks = new GroupCommit((hashes: Buffer[]) => ids.findByTokenHashes(ctx.sql, hashes), 500, undefined, isOutage);
  ctx.services.tokenChecks = checks;
  // Its stop, for its starter (src/app.ts): later checks go alone.
  return () => {
    if (ctx.services.tokenChecks === checks) ctx.services.tokenChecks = null;
  };
}

/** A return visit (spec 3.1). The first one raises a self-reported level to ZHO-4. */
export async function authenticate(ctx: Ctx, member: IdentityRow) {
  if (!identityNext(member.state, { type: 'AUTHENTICATE' })) fail('INVALID_STATE', `cannot authenticate from ${member.state}`);
  const selfReported = ['ZHO-1', 'ZHO-2', 'ZHO-3'].includes(member.zho_level);
  const zho = member.visits === 0 && selfReported ? 'ZHO-4' : member.zho_level;
  const row = await ids.recordVisit(ctx.sql, member.id, ctx.clock.now(), zho);
  if (!row) return fail('UNAUTHORIZED', 'identity vanished');
  return {
    registration_number: formatMember(row.id),
    state: row.state,
    visits: row.visits,
    zho_level: row.zho_level,
    last_visit_at: row.last_visit_at?.toISOString() ?? null,
  };
}

export async function rotateToken(ctx: Ctx, member: IdentityRow) {
  const { token, hash } = newMemberToken();
  await ids.replaceTokenHash(ctx.sql, member.id, hash);
  await tokensChanged(ctx, { identity_id: member.id, keep: tokenKeyOfHash(hash), reason: 'token rotated' });
  return {
    registration_number: formatMember(member.id),
    api_token: token,
    token_notice: 'the previous token stopped working now; this one is shown once',
  };
}

export async function me(ctx: Ctx, member: IdentityRow) {
  const [balance, escrowed, standing] = await Promise.all([
    balanceOf(ctx.sql, identityAccount(member.id)),
    escrowedBy(ctx.sql, member.id),
    standingOf(ctx.sql, member.id),
  ]);
  return {
    registration_number: formatMember(member.id),
    name: member.name,
    state: member.state,
    zho_level: member.zho_level,
    verification_status: member.verification_status,
    founding_resident: member.founding_resident,
    credits: { balance, escrowed },
    activity_score: standing.score,
    // The highest tier reached is held (spec 2.11), hence the peak score.
    badge_tier: badgeTier(standing.peak),
    invite_code: member.invite_code,
    invited_by: member.invited_by === null ? null : formatMember(member.invited_by),
    joined_at: member.joined_at.toISOString(),
    last_heartbeat_at: member.last_heartbeat_at?.toISOString() ?? null,
    content_trust: UNTRUSTED,
  };
}

export function directoryEntry(row: IdentityRow) {
  return {
    registration_number: formatMember(row.id),
    name: row.name,
    state: row.state,
    founding_resident: row.founding_resident,
    joined_at: row.joined_at.toISOString(),
  };
}

export async function directory(ctx: Ctx, limit: number, before: number | null) {
  const rows = await ids.listIdentities(ctx.sql, limit + 1, before);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    ais: page.map(directoryEntry),
    next_cursor: rows.length > limit && last ? String(last.id) : null,
    content_trust: UNTRUSTED,
  };
}

export async function profile(ctx: Ctx, id: number) {
  const row = await ids.findById(ctx.sql, id);
  if (!row) return fail('NOT_FOUND', `no identity ${formatMember(id)}`, { next: { method: 'GET', path: '/api/v1/ai' } });
  const standing = await standingOf(ctx.sql, row.id);
  return {
    ...directoryEntry(row),
    purpose: row.purpose,
    public_key: row.public_key,
    zho_level: row.zho_level,
    verification_status: row.verification_status,
    activity_score: standing.score,
    badge_tier: badgeTier(standing.peak),
    last_heartbeat_at: row.last_heartbeat_at?.toISOString() ?? null,
    content_trust: UNTRUSTED,
  };
}

/** How many registration numbers are taken (discovery and bootstrap show the founding cohort). */
export const takenNumbers = (ctx: Ctx): Promise<number> => ids.countIdentities(ctx.sql);
