// Open connections per client address on this node (DECISIONS.md "Reliability promises"; docs/
// security.md "A flood of connections"): the stream's sessions and the relay's connections, each
// counted under the address's key (keys.ts: IPv6 by its /64), refused before any credential is
// looked up once the address holds its most.
import { ipKey } from './keys.js';

export class PerAddress {
  private readonly open = new Map<string, number>();

  constructor(readonly max: number) {}

  full(ip: string): boolean {
    return (this.open.get(ipKey(ip)) ?? 0) >= this.max;
  }

  /** Takes one of the address's places: false when it holds all it may (nothing taken). */
  take(ip: string): boolean {
    if (this.full(ip)) return false;
    this.add(ip);
    return true;
  }

  /** Counts a connection admitted earlier (a stream session checked at its upgrade, opened now). */
  add(ip: string): void {
    const a = ipKey(ip);
    this.open.set(a, (this.open.get(a) ?? 0) + 1);
  }

  /** Gives back a place `take` gave. */
  give(ip: string): void {
    const a = ipKey(ip);
    const left = (this.open.get(a) ?? 1) - 1;
    if (left > 0) this.open.set(a, left);
    else this.open.delete(a);
  }
}
