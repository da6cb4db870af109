// Forgets Idempotency-Key answers past their 24 h (DECISIONS.md "Idempotent writes"): every node
// sweeps now and then (deleting the same old rows twice is harmless); a lookup ignores an expired
// answer even before it is reaped, so the sweep only bounds the table.
import { reapKeys } from '../domain/idempotency.js';
import type { Ctx } from '../domain/ports.js';
import type { Actor } from './index.js';

export const REAP_EVERY_MS = 10 * 60 * 1000;

export function startIdempotencyReaper(ctx: Ctx, everyMs = REAP_EVERY_MS): Actor {
  const timer = setInterval(() => {
    reapKeys(ctx).catch((err: unknown) => ctx.log.warn({ err }, 'idempotency reaper: sweep failed; tried again later'));
  }, everyMs);
  timer.unref();
  return {
    name: 'idempotency-reaper',
    async stop() {
      clearInterval(timer);
    },
  };
}
