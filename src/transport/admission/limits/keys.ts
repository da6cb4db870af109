// The key an address is counted under, for every limit that counts addresses (HTTP, the stream,
// the relay, idempotency scopes).
import ipaddr from 'ipaddr.js';

/** The key an IP is counted under: IPv4 as is, IPv6 by its /64 (one host usually holds a whole /64). */
export function ipKey(ip: string): string {
  try {
    const a = ipaddr.process(ip);
    if (a.kind() === 'ipv4') return a.toString();
    return `${(a as ipaddr.IPv6).parts
      .slice(0, 4)
      .map((p) => p.toString(16))
      .join(':')}::/64`;
  } catch {
    return ip;
  }
}
