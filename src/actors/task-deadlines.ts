// The task-deadline scheduler (DESIGN.md "Actors"): polls the database for due task deadlines
// every few seconds, starting with a pass at boot so whatever fell due while the node was down
// fires as soon as it is back. Correctness does not depend on this timer: the deadlines live in
// the database and runDue takes each one with SKIP LOCKED (src/domain/task-deadlines.ts).
import { endDueCampaigns } from '../domain/campaigns.js';
import { countDbError } from '../domain/metrics.js';
import type { Ctx } from '../domain/ports.js';
import { noteClosedProposals } from '../domain/proposal-close.js';
import { runDue } from '../domain/task-deadlines.js';
import { type Actor, ActorLoop } from './loop.js';

export const TASK_DEADLINE_POLL_MS = 5000;

export function startTaskDeadlines(ctx: Ctx, opts: { intervalMs?: number } = {}): Actor {
  const intervalMs = opts.intervalMs ?? TASK_DEADLINE_POLL_MS;

  const pass = async (signal: AbortSignal): Promise<void> => {
    ctx.metrics.schedulerTicks.inc({ scheduler: 'task_deadlines' });
    try {
      const fired = await runDue(ctx);
      if (fired > 0) ctx.log.info({ fired }, 'task deadlines fired');
      // Proposal closes are time deadlines too: their authors hear the tally (docs/inbox.md).
      await noteClosedProposals(ctx);
      // So are campaigns' ends_at (docs/treasury.md "Campaigns"), ended once each.
      const ended = await endDueCampaigns(ctx);
      if (ended > 0) ctx.log.info({ ended }, 'campaigns ended');
    } catch (err) {
      // A failed pass changes nothing (each deadline commits on its own); the next one retries.
      countDbError(ctx.metrics, err);
      if (!signal.aborted) ctx.log.warn({ err }, 'task deadline pass failed');
    }
  };
  const loop = new ActorLoop(ctx, { name: 'task-deadlines', pass, next: () => intervalMs }).start();
  return { name: 'task-deadlines', stop: () => loop.stop() };
}
