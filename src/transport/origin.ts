// Which browser origins may use the service's non-HTTP doors. One rule, `originIn`: an Origin
// header is compared, as a serialized origin (scheme, host, port), against a list.
// - MCP (transport security, DNS rebinding): the service's own public origin, and local
//   development hosts on any port.
// - The stream (/api/v1/stream) and the relay (/nostr): STREAM_ALLOWED_ORIGINS, unset = any
//   (agents are not browsers); a request without Origin (every non-browser client) always passes
//   (docs/security.md "Browsers and headers").

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function parseOrigin(origin: string): URL | null {
  let o: URL;
  try {
    o = new URL(origin);
  } catch {
    return null;
  }
  return o.protocol === 'http:' || o.protocol === 'https:' ? o : null;
}

/** True when `origin` is one of `allowed` (serialized origins, as config.ts normalises them). */
export function originIn(origin: string, allowed: readonly string[]): boolean {
  const o = parseOrigin(origin);
  return o !== null && allowed.includes(o.origin);
}

export function originAllowed(origin: string, publicUrl: string): boolean {
  const o = parseOrigin(origin);
  if (!o) return false;
  if (LOCAL_HOSTS.has(o.hostname)) return true;
  let own: string;
  try {
    own = new URL(publicUrl).origin;
  } catch {
    return false;
  }
  return originIn(origin, [own]);
}

/** The stream's and the relay's upgrade rule: `allowed` null means any origin. */
export function upgradeOriginAllowed(origin: string | undefined, allowed: readonly string[] | null): boolean {
  return allowed === null || origin === undefined || origin === '' || originIn(origin, allowed);
}
