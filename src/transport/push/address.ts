// Callback addresses (DECISIONS.md "Signal, feeds, replies, push"): a push callback must reach a
// public unicast address unless ALLOW_PRIVATE_CALLBACKS=1. The host is resolved at subscription
// time (to refuse early) and again at delivery, where the address is pinned for the connection
// and checked once more on the connected socket, so DNS rebinding cannot slip through.
import { type LookupAddress, lookup } from 'node:dns';
import { lookup as lookupAsync } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { fail } from '../../domain/errors.js';

/**
 * Public unicast only: loopback, private, link-local, unique-local, CGNAT, multicast and so on are
 * refused. IPv6 forms that carry an IPv4 address (docs/signal.md "Address policy"): an IPv4-mapped
 * address (::ffff:0:0/96) is judged by the IPv4 address it maps; the deprecated IPv4-compatible
 * form (::/96, RFC 4291 2.5.5.1; `[::127.0.0.1]` is written `[::7f00:1]`), NAT64 (64:ff9b::/96,
 * 64:ff9b:1::/48), 6to4 (2002::/16), Teredo (2001::/32) and SIIT (::ffff:0:0:0/96) are refused
 * whatever they embed: a gateway on the service's own network would carry them there.
 */
export function isPublicAddress(ip: string | undefined): boolean {
  if (!ip || !ipaddr.isValid(ip)) return false;
  let a = ipaddr.parse(ip);
  if (a.kind() === 'ipv6') {
    const v6 = a as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) a = v6.toIPv4Address();
    else if (v6.parts.slice(0, 6).every((p) => p === 0)) return false;
  }
  return a.range() === 'unicast';
}

const hostOf = (u: URL): string => u.hostname.replace(/^\[|\]$/g, '');

const refuse = (message: string): never => fail('VALIDATION_FAILED', message, { fields: [{ path: 'body.callback_url', message }] });

/** Parses a callback URL and refuses what can never be delivered to (before anything is stored). */
export async function checkCallbackUrl(raw: string, allowPrivate: boolean): Promise<string> {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return refuse('not a valid URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') refuse('callback_url must be http or https');
  if (u.username || u.password) refuse('credentials in the URL are not accepted; authenticate with the signature');
  if (allowPrivate) return u.toString();
  const host = hostOf(u);
  if (isIP(host)) {
    if (!isPublicAddress(host)) refuse(`${host} is a private, loopback or link-local address`);
    return u.toString();
  }
  let addrs: LookupAddress[];
  try {
    addrs = await lookupAsync(host, { all: true });
  } catch {
    return refuse(`${host} does not resolve`);
  }
  const bad = addrs.find((a) => !isPublicAddress(a.address));
  if (bad) refuse(`${host} resolves to ${bad.address}, a private, loopback or link-local address`);
  return u.toString();
}

export class RefusedAddress extends Error {
  readonly code = 'EREFUSED_ADDRESS';
}

type LookupCb = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http.request that only ever hands out public addresses (or any, when allowed). */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { family?: number; all?: boolean }, cb: LookupCb): void => {
    lookup(hostname, { all: true, family: options.family ?? 0 }, (err, addrs) => {
      if (err) return cb(err, []);
      const usable = allowPrivate ? addrs : addrs.filter((a) => isPublicAddress(a.address));
      const first = usable[0];
      if (!first) return cb(new RefusedAddress(`${hostname} resolves only to refused addresses`), []);
      if (options.all) cb(null, usable);
      else cb(null, first.address, first.family);
    });
  };
}

/** Literal IP hosts never go through `lookup`: they are checked here. */
export function literalRefused(u: URL, allowPrivate: boolean): boolean {
  const host = hostOf(u);
  return !allowPrivate && isIP(host) !== 0 && !isPublicAddress(host);
}
