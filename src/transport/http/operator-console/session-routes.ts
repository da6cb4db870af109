// Signing in and out of the console (docs/operations.md "The operator's console"). The token
// travels only in the sign-in form's POST body, is compared in constant time, and a wrong one
// spends a point of the address's bad-token budget (`bad_token_ip`, as an unknown token on the
// API does); once spent, sign-ins from that address are refused (429) before any comparison.
import { z } from 'zod';
import { CommonsError } from '../../../domain/errors.js';
import { isOperatorToken, signIn, signOut } from '../../../domain/operator-session.js';
import { STATUS_OF } from '../../runner/envelope.js';
import { type AnyRoute, route } from '../../runner/route.js';
import { CONSOLE_ERRORS, CONSOLE_POST_STATUSES, runForm } from './actions.js';
import { clearedCookie, cookieSession, originRefusal, sessionCookie } from './guard.js';
import { consoleHtml, seeOther } from './html.js';
import { offPage, signInPage } from './views-auth.js';

const base = {
  hidden: true,
  auth: 'none' as const,
  issuesGuest: false as const,
  form: true as const,
  raw: true,
  tags: ['operator-console'],
  produces: 'text/html',
  response: z.string(),
};

export const consoleSessionRoutes: AnyRoute[] = [
  route({
    ...base,
    method: 'POST',
    path: '/operator/sign-in',
    summary: 'Operator console: sign in with the operator token (form field `token`); sets the session cookie',
    body: z.object({ token: z.string().max(1000).optional() }),
    statuses: {
      303: { description: 'signed in: the session cookie is set (HttpOnly, SameSite=Strict, Path=/operator) and Location is /operator' },
      401: {
        description: 'not the operator token: the sign-in page again (text/html); one point of the address’s bad-token budget',
        body: true,
      },
      403: { description: 'Origin is not PUBLIC_URL (text/html); nothing is compared or written', body: true },
      404: { description: 'the console is off (OPERATOR_TOKEN unset; text/html)', body: true },
      429: { description: 'the address spent its bad-token budget: refused before comparing (text/html, Retry-After)', body: true },
    },
    errors: [...CONSOLE_ERRORS, 'RATE_LIMITED'],
    handler: async (req, ctx) => {
      if (!ctx.config.operatorToken) return consoleHtml(offPage(), 404);
      const foreign = originRefusal(ctx, req);
      if (foreign) return foreign;
      const token = req.body.token ?? '';
      try {
        // A wrong token's point is taken before it is compared (refused once none is left), the
        // same budget as an unknown token on any door; the operator's own token takes none.
        const s = await req.nested.admitSecret(isOperatorToken(ctx, token), () =>
          signIn(ctx, token, cookieSession(req.headers), req.requestId),
        );
        return seeOther('/operator', { 'set-cookie': sessionCookie(ctx, s) });
      } catch (err) {
        if (!(err instanceof CommonsError)) throw err;
        const extra: Record<string, string> = err.retryAfterS !== undefined ? { 'retry-after': String(err.retryAfterS) } : {};
        const page = signInPage({ title: 'Sign in', message: err.message, alert: true });
        return consoleHtml(page, STATUS_OF[err.code], extra);
      }
    },
  }),
  route({
    ...base,
    method: 'POST',
    path: '/operator/sign-out',
    summary: 'Operator console: end this session (or every console session, with `everywhere=1`) at once, on every node',
    body: z.object({ csrf: z.string().max(200).optional(), everywhere: z.string().max(10).optional() }),
    statuses: CONSOLE_POST_STATUSES,
    errors: [...CONSOLE_ERRORS],
    handler: (req, ctx) =>
      runForm(ctx, { ...req, body: { ...req.body, back: '/operator' } }, async (session) => {
        await signOut(ctx, session.id, req.body.everywhere === '1', req.requestId);
        return { headers: { 'set-cookie': clearedCookie(ctx) } };
      }),
  }),
];
