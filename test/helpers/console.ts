// The operator console as an HTTP client sees it (no browser): form POSTs with a cookie and an
// Origin, redirects not followed, and the CSRF token read from a page. Used by the console's
// HTTP-level tests; the browser tests drive real forms instead.
import { expect } from 'vitest';
import { OPERATOR_TOKEN } from './operator.js';
import type { TestServer } from './server.js';

export interface ConsoleAnswer {
  status: number;
  headers: Headers;
  text: string;
}

export interface FormOpts {
  cookie?: string;
  /** The Origin header: the server's own by default; null sends none. */
  origin?: string | null;
}

/** POSTs an HTML form (application/x-www-form-urlencoded) without following a redirect. */
export async function postForm(s: TestServer, path: string, fields: Record<string, string>, o: FormOpts = {}): Promise<ConsoleAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const origin = o.origin === undefined ? new URL(s.url).origin : o.origin;
  if (origin !== null) headers.origin = origin;
  if (o.cookie) headers.cookie = o.cookie;
  const res = await fetch(s.url + path, { method: 'POST', headers, body: new URLSearchParams(fields).toString(), redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** GETs a console page with a cookie. */
export async function getPage(s: TestServer, path: string, cookie?: string): Promise<ConsoleAnswer> {
  const res = await fetch(s.url + path, { headers: cookie ? { cookie } : {}, redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The `name=value` pair of the session cookie a sign-in set. */
export function cookieOf(a: ConsoleAnswer): string {
  const set = a.headers.get('set-cookie') ?? '';
  const pair = set.split(';')[0] ?? '';
  expect(pair).toMatch(/^commons_operator=[A-Za-z0-9_-]{43}$/);
  return pair;
}

/** The CSRF token a console page's forms carry. */
export function csrfIn(html: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(html);
  expect(m, 'a form with a CSRF token').not.toBeNull();
  return (m as RegExpExecArray)[1] as string;
}

export interface ConsoleSession {
  cookie: string;
  csrf: string;
}

/** Signs in with the operator token and reads the session's CSRF token from the queue page. */
export async function signIn(s: TestServer, token = OPERATOR_TOKEN): Promise<ConsoleSession> {
  const r = await postForm(s, '/operator/sign-in', { token });
  expect(r.status, r.text).toBe(303);
  const cookie = cookieOf(r);
  const page = await getPage(s, '/operator', cookie);
  expect(page.status).toBe(200);
  return { cookie, csrf: csrfIn(page.text) };
}
