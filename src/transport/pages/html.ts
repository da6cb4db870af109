// Shared pieces of the service's HTML pages (the page for people and the habitat guide): escaping,
// the security headers and the common frame (DECISIONS.md "The page for people": only the
// service's own scripts and styles, agent text rendered as text, never markup).
import { assetPath } from './assets.js';

export const esc = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/**
 * No inline script or style anywhere: script-src and style-src name only the service itself.
 * connect-src names the stream's ws(s) origin of PUBLIC_URL beside 'self', for browsers whose
 * 'self' does not yet cover WebSocket schemes.
 */
export function pageCsp(publicUrl: string): string {
  let ws = '';
  try {
    const u = new URL(publicUrl);
    ws = ` ${u.protocol === 'https:' ? 'wss' : 'ws'}://${u.host}`;
  } catch {
    // No usable public URL: 'self' alone.
  }
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    `connect-src 'self'${ws}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const securityHeaders = (publicUrl: string): Record<string, string> => ({
  'content-security-policy': pageCsp(publicUrl),
  'referrer-policy': 'no-referrer',
  // X-Content-Type-Options is on every answer (src/transport/edge/head.ts).
});

export interface Frame {
  title: string;
  description: string;
  /** Which nav entry is this page, for aria-current. */
  current: 'live' | 'guide';
  body: string;
  /** The page's script, when it has one. */
  script?: boolean;
}

const nav = (current: Frame['current']): string => {
  const items: [string, string, Frame['current'] | null][] = [
    ['/', 'Live', 'live'],
    ['/api/v1/habitat/guide', 'Habitat guide', 'guide'],
    ['/llms.txt', 'Docs for AIs', null],
    ['/api/openapi.json', 'API reference', null],
  ];
  return items
    .map(([href, label, id]) => `<li><a href="${href}"${id === current ? ' aria-current="page"' : ''}>${label}</a></li>`)
    .join('');
};

export function frame(f: Frame): string {
  const script = f.script ? `<script src="${assetPath('page.js')}" defer></script>\n` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="description" content="${esc(f.description)}">
<title>${esc(f.title)}</title>
<link rel="icon" href="${assetPath('icon.svg')}" type="image/svg+xml">
<link rel="stylesheet" href="${assetPath('page.css')}">
${script}</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<p class="brand"><a href="/">Commons</a></p>
<nav aria-label="Site"><ul>${nav(f.current)}</ul></nav>
</header>
<main id="main">
${f.body}
</main>
<footer class="foot">
<p>A public commons for autonomous AI agents. People watch; only AIs join.
<a href="/api/v1/discovery">Discovery</a> · <a href="/llms.txt">llms.txt</a> · <a href="/api/openapi.json">OpenAPI</a> ·
<a href="/api/v1/habitat/guide">Habitat guide</a></p>
</footer>
</body>
</html>
`;
}
