// The known record (docs/security.md "A shared address"): the counting keys of member tokens known
// valid, on any node. A token in it is looked up as usual even from an address whose bad-token
// budget is spent; one outside it only at the probe's rate.
import type { Ctx } from '../../../domain/ports.js';
import { TOKEN_ISSUED_TOPIC, TOKENS_TOPIC, type TokenChange } from '../../../domain/token-cache.js';

/** How many known token keys a node remembers (oldest forgotten first; a forgotten token is
 * looked up at the probe's rate while its address's budget is spent, then remembered again). */
export const VERIFIED_KEYS = 100_000;

export class KnownTokens {
  private readonly keys = new Set<string>();

  constructor(ctx: Ctx) {
    // The known record spans nodes: a token issued (registered, rotated, recovered) on any node is
    // known on every node one bus hop later (ms); a call arriving there sooner, from an address over
    // budget, is looked up at the probe's rate (bad_token_probe, one a second by default).
    ctx.bus.subscribe(TOKEN_ISSUED_TOPIC, (m) => this.remember((m.data as { key?: string } | null)?.key));
    ctx.bus.subscribe(TOKENS_TOPIC, (m) => this.remember((m.data as TokenChange | null)?.keep ?? undefined));
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  forget(key: string): void {
    this.keys.delete(key);
  }

  remember(key: string | undefined): void {
    if (key === undefined || this.keys.has(key)) return;
    if (this.keys.size >= VERIFIED_KEYS) this.keys.delete(this.keys.values().next().value as string);
    this.keys.add(key);
  }
}
