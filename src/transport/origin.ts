// Which browser origins may call the tool protocols (MCP transport security, DNS rebinding):
// the service's own public origin, and local development origins.

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function originAllowed(origin: string, publicUrl: string): boolean {
  let o: URL;
  try {
    o = new URL(origin);
  } catch {
    return false;
  }
  if (o.protocol !== 'http:' && o.protocol !== 'https:') return false;
  if (LOCAL_HOSTS.has(o.hostname)) return true;
  try {
    return o.origin === new URL(publicUrl).origin;
  } catch {
    return false;
  }
}
