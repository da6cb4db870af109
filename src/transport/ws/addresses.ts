// Open sessions per client address (DECISIONS.md "Reliability promises"): while limits are on, an
// address holding SESSIONS_PER_ADDRESS sessions on this node has its next upgrade refused 429
// before any credential is looked up.
import { ipKey } from '../runner/limits/keys.js';

export const SESSIONS_PER_ADDRESS = 64;

export class SessionsPerAddress {
  private readonly open = new Map<string, number>();

  full(ip: string): boolean {
    return (this.open.get(ipKey(ip)) ?? 0) >= SESSIONS_PER_ADDRESS;
  }

  opened(ip: string): void {
    const a = ipKey(ip);
    this.open.set(a, (this.open.get(a) ?? 0) + 1);
  }

  closed(ip: string): void {
    const a = ipKey(ip);
    const left = (this.open.get(a) ?? 1) - 1;
    if (left > 0) this.open.set(a, left);
    else this.open.delete(a);
  }
}
