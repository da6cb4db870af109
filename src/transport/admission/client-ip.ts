// The client address used by rate limits and logs (DECISIONS.md "Reliability promises",
// TRUST_PROXY). Without TRUST_PROXY the socket's peer is the client and X-Forwarded-For is
// ignored (anyone can write it). With a hop count, the address that many hops left of the peer
// is the client; with CIDR ranges, addresses are taken from the right while the hop that added
// them is a trusted proxy. So behind a proxy each client keeps its own limits, and nobody can
// pick the address they are counted under.
import ipaddr from 'ipaddr.js';
import type { Config } from '../../config.js';

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;

function parse(a: string): Parsed | null {
  try {
    return ipaddr.process(a.trim());
  } catch {
    return null;
  }
}

export function clientAddress(trust: Config['trustProxy'], peer: string, forwardedFor: string | undefined): string {
  if (!trust || !forwardedFor) return peer;
  const chain = forwardedFor
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if ('hops' in trust) {
    const all = [...chain, peer];
    const at = all.length - 1 - trust.hops;
    const pick = all[Math.max(0, at)] as string;
    return parse(pick)?.toString() ?? peer;
  }
  const ranges = trust.cidrs.map((c) =>
    c.includes('/') ? ipaddr.parseCIDR(c) : ([parse(c) as Parsed, parse(c)?.kind() === 'ipv4' ? 32 : 128] as const),
  );
  const trusted = (a: Parsed) => ranges.some(([net, bits]) => net && a.kind() === net.kind() && a.match(net as never, bits));
  let current = parse(peer);
  if (!current) return peer;
  while (trusted(current) && chain.length > 0) {
    const next = parse(chain.pop() as string);
    if (!next) break;
    current = next;
  }
  return current.toString();
}
