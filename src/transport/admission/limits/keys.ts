// The key an address is counted under, for every limit that counts addresses (HTTP, the stream,
// the relay, idempotency scopes).
import ipaddr from 'ipaddr.js';

// Parsing an address costs more than the read it counts (the lean read path counts every
// anonymous read): the keys of the addresses seen lately are kept, forgotten all at once when
// this many are held (a key is a pure function of its address: forgetting only costs a parse).
const REMEMBERED = 10_000;
const known = new Map<string, string>();

/** The key an IP is counted under: IPv4 as is, IPv6 by its /64 (one host usually holds a whole /64). */
export function ipKey(ip: string): string {
  let key = known.get(ip);
  if (key === undefined) {
    key = parseKey(ip);
    if (known.size >= REMEMBERED) known.clear();
    known.set(ip, key);
  }
  return key;
}

function parseKey(ip: string): string {
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
