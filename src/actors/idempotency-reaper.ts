// Forgets Idempotency-Key answers past their 24 h (DECISIONS.md "Idempotent writes"): every node
// sweeps now and then (deleting the same old rows twice is harmless); a lookup ignores an expired
// answer even before it is reaped, so the sweep only bounds the table.
import { reapKeys } from '../domain/idempotency.js';
import type { Ctx } from '../domain/ports.js';
import { type Actor, ActorLoop } from './loop.js';

export const REAP_EVERY_MS = 10 * 60 * 1000;

export function startIdempotencyReaper(ctx: Ctx, everyMs = REAP_EVERY_MS): Actor {
  // A failed sweep is logged by the loop and tried again at the next one.
  const loop = new ActorLoop(ctx, { name: 'idempotency-reaper', pass: () => reapKeys(ctx), next: () => everyMs, first: everyMs });
  loop.start();
  return { name: 'idempotency-reaper', stop: () => loop.stop() };
}
