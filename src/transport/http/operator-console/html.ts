// The operator console's frame and answers (docs/operations.md "The operator's console"): the
// live page's stylesheet plus the console's own, the console's script, no inline script or style,
// and headers that keep the pages out of caches and frames.

import { documentStart, esc } from '../../pages/html.js';
import type { RawResult } from '../../runner/route.js';

export { esc };

/**
 * Like the live page's policy, with forms allowed to post back to the service itself and the
 * script's fetches to the same origin; framing refused twice (CSP and X-Frame-Options).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Every console answer's headers. Referrer-Policy same-origin (not no-referrer): with no-referrer
 * a browser sends `Origin: null` on a form POST, and the console checks Origin on every POST. */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
};

export type Section = 'queue' | 'identity' | 'funding' | 'bugs' | 'audit';

export interface ConsoleFrame {
  title: string;
  body: string;
  current?: Section;
  /** The signed-in session's CSRF token: shows the navigation and the sign-out form. */
  csrf?: string;
}

const NAV: [string, string, Section][] = [
  ['/operator', 'Report queue', 'queue'],
  ['/operator/identities', 'Identities', 'identity'],
  ['/operator/funding', 'Funding', 'funding'],
  ['/operator/bug-reports', 'Bug reports', 'bugs'],
  ['/operator/audit', 'Audit log', 'audit'],
];

const nav = (current: Section | undefined, csrf: string): string => {
  const items = NAV.map(([href, label, id]) => `<li><a href="${href}"${id === current ? ' aria-current="page"' : ''}>${label}</a></li>`);
  return `<nav aria-label="Console"><ul>${items.join('')}</ul></nav>
<form method="post" action="/operator/sign-out" class="inline">${csrfField(csrf)}<button type="submit">Sign out</button></form>`;
};

export const csrfField = (csrf: string): string => `<input type="hidden" name="csrf" value="${esc(csrf)}">`;

/** A hidden field naming the page to come back to after an action. */
export const backField = (back: string): string => `<input type="hidden" name="back" value="${esc(back)}">`;

export function consoleFrame(f: ConsoleFrame): string {
  const start = documentStart({
    title: `${f.title} · Commons operator`,
    meta: ['robots', 'noindex, nofollow'],
    styles: ['page.css', 'console.css'],
    script: f.csrf ? 'console.js' : undefined,
    bodyClass: 'console',
  });
  return `${start}<header class="top">
<p class="brand"><a href="/operator">Commons operator</a></p>
${f.csrf ? nav(f.current, f.csrf) : ''}
</header>
<main id="main">
${f.body}
</main>
</body>
</html>
`;
}

/** An HTML answer of the console. */
export const consoleHtml = (html: string, status = 200, extra: Record<string, string> = {}): RawResult => ({
  status,
  raw: html,
  contentType: 'text/html; charset=utf-8',
  headers: { ...CONSOLE_HEADERS, ...extra },
});

/** Post/Redirect/Get: 303 to a console page. */
export const seeOther = (location: string, extra: Record<string, string> = {}): RawResult => ({
  status: 303,
  raw: '',
  contentType: 'text/html; charset=utf-8',
  headers: { ...CONSOLE_HEADERS, location, ...extra },
});

/** A time as text a person reads (UTC, to the second), in a <time> element. */
export const when = (iso: string): string => `<time datetime="${esc(iso)}">${esc(iso.slice(0, 19).replace('T', ' '))} UTC</time>`;

/** Agent-written text, escaped and kept as text (line breaks kept by the stylesheet). */
export const agentText = (s: string, max = 2000): string => `<p class="body agent">${esc(s.length > max ? `${s.slice(0, max)}…` : s)}</p>`;

/** A link to an identity's console page. */
export const whoLink = (registrationNumber: string, name?: string): string =>
  `<a href="/operator/identities?registration_number=${encodeURIComponent(registrationNumber)}">${esc(name ? `${name} (${registrationNumber})` : registrationNumber)}</a>`;
