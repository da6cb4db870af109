// The console's gates (docs/operations.md "The operator's console"): the session cookie, the
// Origin check and the CSRF token. Each answers with the console's own HTML page, never a write.
import { type ConsoleSession, csrfMatches, currentSession } from '../../../domain/operator-session.js';
import type { Ctx } from '../../../domain/ports.js';
import type { RawResult, Req } from '../../runner/route.js';
import { consoleHtml } from './html.js';
import { offPage, signInPage } from './views-auth.js';

export const COOKIE = 'commons_operator';

/** The session id in the request's cookies, or null. */
export function cookieSession(headers: Record<string, string>): string | null {
  for (const part of (headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === COOKIE) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

const secure = (ctx: Ctx): string => (ctx.publicUrl().startsWith('https:') ? '; Secure' : '');

/** The cookie that carries a new session: script cannot read it, other sites never send it, and it
 * goes only to the console's paths. Max-Age is the absolute lifetime; the idle one is the server's. */
export const sessionCookie = (ctx: Ctx, s: ConsoleSession): string =>
  `${COOKIE}=${s.id}; Path=/operator; HttpOnly; SameSite=Strict; Max-Age=${Math.max(0, Math.ceil((s.expiresAt.getTime() - ctx.clock.now().getTime()) / 1000))}${secure(ctx)}`;

export const clearedCookie = (ctx: Ctx): string => `${COOKIE}=; Path=/operator; HttpOnly; SameSite=Strict; Max-Age=0${secure(ctx)}`;

/** PUBLIC_URL's origin (scheme, host and port), which every console POST must come from. */
export function publicOrigin(ctx: Ctx): string | null {
  try {
    return new URL(ctx.publicUrl()).origin;
  } catch {
    return null;
  }
}

/**
 * A POST must name the service's own origin in `Origin`. A POST without `Origin` is refused too:
 * every current browser sends it on a form POST (the console's Referrer-Policy keeps it from
 * being `null`), so its absence means a client that is not the console's page.
 */
export function originRefusal(ctx: Ctx, req: Req): RawResult | null {
  const expected = publicOrigin(ctx);
  const given = req.headers.origin;
  if (given !== undefined && expected !== null && given === expected) return null;
  const why =
    given === undefined ? 'the request carries no Origin header' : `the request comes from ${given}, not ${expected ?? 'PUBLIC_URL'}`;
  return refusal(403, 'Refused: not from this console', `${why}. Console actions are accepted only from the console's own pages.`);
}

/** 403 unless the form's CSRF token is the session's. */
export function csrfRefusal(ctx: Ctx, s: ConsoleSession, form: Record<string, string | undefined>): RawResult | null {
  if (csrfMatches(ctx, s.id, form.csrf)) return null;
  return refusal(403, 'Refused: the form has expired', 'The form did not carry this session’s token. Reload the page and try again.');
}

export const refusal = (status: number, title: string, message: string): RawResult =>
  consoleHtml(signInPage({ title, message, signIn: false }), status);

export type Gate = { session: ConsoleSession } | { answer: RawResult };

/**
 * The signed-in session of a request, or the answer to give instead: 404 when the console is off
 * (OPERATOR_TOKEN unset), 401 with the sign-in form when there is no live session. `touch`:
 * the request is the operator's own doing (see currentSession).
 */
export async function gate(ctx: Ctx, req: Req, touch = true): Promise<Gate> {
  if (!ctx.config.operatorToken) return { answer: consoleHtml(offPage(), 404) };
  const session = await currentSession(ctx, cookieSession(req.headers), touch);
  if (!session) {
    return {
      answer: consoleHtml(
        signInPage({ title: 'Sign in', message: 'Your console session has ended or was signed out. Sign in again.' }),
        401,
        {
          'set-cookie': clearedCookie(ctx),
        },
      ),
    };
  }
  return { session };
}
