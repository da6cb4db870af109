// The operator console's sessions (docs/operations.md "The operator's console"). Signing in with
// the operator token (compared in constant time, as the operator API compares it) opens a session
// whose id goes to the browser in a cookie; the database keeps only its hash, so a sign-out or
// revocation holds on every node at once. A session ends after IDLE_MS without use or
// ABSOLUTE_MS after sign-in, whichever comes first, and when OPERATOR_TOKEN changes (each row
// carries a fingerprint of the token it was opened with). Each session has its CSRF token, an
// HMAC of its id under the server secret: a page of that session can show it, no other site can
// compute it.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { writeAudit } from '../store/audit.js';
import * as store from '../store/operator-sessions.js';
import { fail } from './errors.js';
import { OPERATOR } from './operator.js';
import type { Ctx } from './ports.js';
import { safeEqual } from './tokens.js';

/** Idle lifetime: a console left alone for half an hour asks for the token again. */
export const IDLE_MS = 30 * 60 * 1000;
/** Absolute lifetime: a working day at most, however active. */
export const ABSOLUTE_MS = 8 * 3600 * 1000;

const ID_FORMAT = /^[A-Za-z0-9_-]{43}$/;

const hashId = (id: string): Buffer => createHash('sha256').update(id, 'utf8').digest();

const fingerprint = (ctx: Ctx, token: string): Buffer => createHmac('sha256', ctx.secret).update(`operator-token:${token}`).digest();

export interface ConsoleSession {
  /** The session id (the cookie's value): never stored, never logged. */
  id: string;
  csrf: string;
  expiresAt: Date;
}

/** The CSRF token bound to a session id. */
export const csrfOf = (ctx: Ctx, id: string): string => createHmac('sha256', ctx.secret).update(`csrf:${id}`).digest('base64url');

/** True when `given` is the CSRF token of session `id` (constant time). */
export function csrfMatches(ctx: Ctx, id: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(csrfOf(ctx, id));
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Opens a session for the operator token presented in the sign-in form, ending `previous` (the
 * session the browser held, if any: the id is rotated at every sign-in). A wrong token, or an
 * instance without OPERATOR_TOKEN, answers 401 UNAUTHORIZED and writes nothing.
 */
/** The operator token itself (a known credential: no stranger's guesses at its address lock it out). */
export function isOperatorToken(ctx: Ctx, token: string): boolean {
  const expected = ctx.config.operatorToken;
  return Boolean(expected) && safeEqual(token, expected as string);
}

export async function signIn(ctx: Ctx, token: string, previous: string | null, requestId: string): Promise<ConsoleSession> {
  const expected = ctx.config.operatorToken;
  if (!expected) return fail('UNAUTHORIZED', 'the operator console is off on this instance (OPERATOR_TOKEN unset)');
  if (!safeEqual(token, expected)) return fail('UNAUTHORIZED', 'that is not the operator token');
  const at = ctx.clock.now();
  const id = randomBytes(32).toString('base64url');
  const expiresAt = new Date(at.getTime() + ABSOLUTE_MS);
  await ctx.sql.begin(async (tx) => {
    if (previous && ID_FORMAT.test(previous)) await store.deleteSession(tx, hashId(previous));
    await store.purgeSessions(tx, at, IDLE_MS);
    await store.insertSession(tx, hashId(id), fingerprint(ctx, expected), at, expiresAt);
    await writeAudit(tx, { actor: OPERATOR, action: 'console.signed_in', detail: { expires_at: expiresAt.toISOString() }, requestId, at });
  });
  return { id, csrf: csrfOf(ctx, id), expiresAt };
}

/** The live session a cookie names, or null: unknown, signed out, idle, past its end, or opened
 * with an operator token that is no longer the configured one. A page or form the operator opens
 * marks it used; `touch: false` (the page script's polling of the counts) does not, so a console
 * left open and unattended still ends after IDLE_MS. */
export async function currentSession(ctx: Ctx, id: string | null, touch = true): Promise<ConsoleSession | null> {
  const expected = ctx.config.operatorToken;
  if (!expected || !id || !ID_FORMAT.test(id)) return null;
  const find = touch ? store.touchSession : store.peekSession;
  const row = await find(ctx.sql, hashId(id), ctx.clock.now(), IDLE_MS);
  if (!row) return null;
  const fp = fingerprint(ctx, expected);
  if (row.token_fp.length !== fp.length || !timingSafeEqual(row.token_fp, fp)) return null;
  return { id, csrf: csrfOf(ctx, id), expiresAt: row.expires_at };
}

/** Ends this session, or every console session (sign out everywhere): their cookies are refused
 * from now on, on every node. */
export async function signOut(ctx: Ctx, id: string, everywhere: boolean, requestId: string): Promise<void> {
  const at = ctx.clock.now();
  await ctx.sql.begin(async (tx) => {
    const ended = everywhere
      ? await store.deleteAllSessions(tx)
      : Number(ID_FORMAT.test(id) && (await store.deleteSession(tx, hashId(id))));
    await writeAudit(tx, { actor: OPERATOR, action: 'console.signed_out', detail: { everywhere, sessions_ended: ended }, requestId, at });
  });
}
