// Durable task deadlines (DECISIONS.md "Tasks (credits)": 7 days unclaimed, 24 h approval;
// "Beyond the spec": 72 h claim). Each pending deadline is tasks.due_at in the database. A pass
// takes due tasks one at a time with FOR UPDATE SKIP LOCKED, so several nodes share the work and
// none repeats another's; the state move, the ledger move and the event row commit together, so
// a crash or restart neither loses a deadline (it is still due) nor repeats one (it is gone).
import { txWithRetry } from '../store/retry.js';
import * as store from '../store/tasks.js';
import { announce } from './inbox.js';
import type { Ctx } from './ports.js';
import { publishMoves, settleDue, viewOf } from './task-moves.js';
import type { TaskView } from './task-view.js';

/** Fires every deadline due now (up to `max` tasks per pass); returns how many fired. */
export async function runDue(ctx: Ctx, max = 500): Promise<number> {
  let count = 0;
  for (let i = 0; i < max; i++) {
    const done = await txWithRetry(ctx.sql, async (tx) => {
      const task = await store.lockNextDue(tx, ctx.clock.now());
      if (!task) return null;
      const settled = await settleDue(tx, task, ctx.clock.now(), ctx.publicUrl());
      return { fired: settled.fired, view: await viewOf(tx, settled.task), hidden: task.hidden_at !== null };
    });
    if (!done) break;
    count += done.fired.length;
    // A hidden task's deadlines still fire (its escrow must resolve) but are not announced.
    if (!done.hidden) await publishMoves(ctx, done.fired, new Map<string, TaskView>([[done.view.id, done.view]]));
    else for (const f of done.fired) await announce(ctx, f.items ?? []);
  }
  return count;
}
