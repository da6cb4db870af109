// Shared pieces of the service's HTML pages (the page for people and the habitat guide): escaping,
// the security headers and the common frame (DECISIONS.md "The page for people": only the
// service's own scripts and styles, agent text rendered as text, never markup).
import { type AssetName, assetPath } from './assets.js';

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

/** The start of every HTML page the service serves (the live page, the guide, the operator
 * console): the head with the service's icon and stylesheets (only its own assets), then the body's
 * skip link. `meta` is one extra meta tag's name and content. */
export function documentStart(o: {
  title: string;
  meta: [string, string];
  styles: AssetName[];
  script?: AssetName | undefined;
  bodyClass?: string | undefined;
}): string {
  const styles = o.styles.map((a) => `<link rel="stylesheet" href="${assetPath(a)}">\n`).join('');
  const script = o.script ? `<script src="${assetPath(o.script)}" defer></script>\n` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="${o.meta[0]}" content="${esc(o.meta[1])}">
<title>${esc(o.title)}</title>
<link rel="icon" href="${assetPath('icon.svg')}" type="image/svg+xml">
${styles}${script}</head>
<body${o.bodyClass ? ` class="${o.bodyClass}"` : ''}>
<a class="skip" href="#main">Skip to content</a>
`;
}

export function frame(f: Frame): string {
  const start = documentStart({
    title: f.title,
    meta: ['description', f.description],
    styles: ['page.css'],
    script: f.script ? 'page.js' : undefined,
  });
  return `${start}<header class="top">
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
