// Applies one task move inside the caller's transaction: the machine decides the next state; the
// task row, the ledger, the points and the event log change together or not at all.
import { deadlineOf, type TaskEventType, type TaskState, taskNext } from '../machines/task.js';
import { escrowAccount, identityAccount, type Tx, transfer } from '../store/ledger.js';
import { addPoints } from '../store/points.js';
import type { TaskPatch, TaskRow } from '../store/tasks.js';
import * as store from '../store/tasks.js';
import { fail } from './errors.js';
import { addItems, announce, type OwnedItem } from './inbox.js';
import type { Ctx } from './ports.js';
import { taskItems } from './task-inbox.js';
import { taskView } from './task-view.js';

/** Score events (spec 3.4). */
export const POINTS = { posted: 7, solved: 30, approved: 5 } as const;

export const taskRef = (id: string): string => `task:${id}`;
export const taskEscrow = (id: string): string => escrowAccount(taskRef(id));

export interface FiredEvent {
  seq: string;
  taskId: string;
  event: TaskEventType | 'POST';
  from: TaskState | null;
  to: TaskState;
  /** Inbox items the move wrote (announced with it). */
  items?: OwnedItem[];
}

/** The column holding the deadline of each waiting state (tasks.due_at is derived from it). */
const DEADLINE_COLUMN = { open: 'expires_at', claimed: 'claim_expires_at', delivered: 'approve_by' } as const;

const plus = (at: Date, ms: number): Date => new Date(at.getTime() + ms);

export interface MoveInput {
  actorId: number | null;
  at: Date;
  /** The service's public base URL, for the links in inbox items. */
  base: string;
  submission?: string;
}

/** A move made: its event, and the task's row after it (still locked by the transaction). */
export interface Moved extends FiredEvent {
  task: TaskRow;
}

/** One move on a locked task row; refuses (409 INVALID_STATE) what the machine refuses. */
export async function applyMove(tx: Tx, task: TaskRow, event: TaskEventType, m: MoveInput): Promise<Moved> {
  const to = taskNext(task.state, event);
  if (!to) {
    return fail('INVALID_STATE', `a task that is ${task.state} does not allow ${event}`, {
      next: { method: 'GET', path: `/api/v1/habitat/tasks/${task.id}`, doc: 'read the task again for its current state' },
    });
  }
  const patch: TaskPatch = { state: to };
  const wait = deadlineOf(to);
  if (wait && to !== task.state) patch[DEADLINE_COLUMN[to as keyof typeof DEADLINE_COLUMN]] = plus(m.at, wait.afterMs);
  const ref = taskRef(task.id);
  switch (event) {
    case 'CLAIM':
      Object.assign(patch, { claimer_id: m.actorId, claimed_at: m.at });
      break;
    case 'SUBMIT':
      await store.insertSubmission(tx, task.id, m.actorId as number, m.submission as string, m.at);
      patch.delivered_at = m.at;
      break;
    case 'APPROVE':
    case 'AUTO_APPROVE': {
      const solver = task.claimer_id as number;
      Object.assign(patch, { approved_at: m.at, approved_how: event === 'APPROVE' ? 'poster' : 'automatic' });
      await transfer(tx, task.escrow_account, identityAccount(solver), task.reward_points, 'task_reward', ref);
      await addPoints(tx, { identityId: solver }, 'task_solved', POINTS.solved, ref);
      // The approval points reward the poster's act of reviewing; an automatic approval is the
      // poster not acting, so it earns nothing (docs/tasks.md).
      if (event === 'APPROVE') await addPoints(tx, { identityId: task.poster_id }, 'task_approved', POINTS.approved, ref);
      break;
    }
    case 'CANCEL':
    case 'EXPIRE_UNCLAIMED':
      Object.assign(patch, { closed_at: m.at, closed_reason: event === 'CANCEL' ? 'cancelled' : 'expired' });
      await transfer(tx, task.escrow_account, identityAccount(task.poster_id), task.reward_points, 'task_refund', ref);
      // Withdrawing a task withdraws its posting points, so post-and-cancel cannot farm score.
      if (event === 'CANCEL') await addPoints(tx, { identityId: task.poster_id }, 'task_withdrawn', -POINTS.posted, ref);
      break;
    case 'CLAIM_LAPSED':
      // The claimer loses the claim, nothing else (DECISIONS "Beyond the spec").
      Object.assign(patch, { claimer_id: null, claimed_at: null, claim_expires_at: null });
      break;
  }
  const moved = await store.moveTask(tx, task.id, task.version, patch, { event, from: task.state, to, actorId: m.actorId, at: m.at });
  const items = await addItems(tx, taskItems(task, event, m.actorId, `${m.base}/api/v1/habitat/tasks/${task.id}`));
  return { seq: moved.seq, taskId: task.id, event, from: task.state, to, items, task: moved.row };
}

/**
 * Fires every deadline of a locked task that is due at `now`, in order. Each fires at its own
 * due time, so the outcome never depends on how late the scheduler (or a caller) noticed it.
 */
export async function settleDue(tx: Tx, task: TaskRow, now: Date, base: string): Promise<{ task: TaskRow; fired: FiredEvent[] }> {
  const fired: FiredEvent[] = [];
  let t = task;
  while (t.due_at && t.due_at.getTime() <= now.getTime()) {
    const deadline = deadlineOf(t.state);
    if (!deadline) break;
    const moved = await applyMove(tx, t, deadline.event, { actorId: null, at: t.due_at, base });
    fired.push(moved);
    t = moved.task;
  }
  return { task: t, fired };
}

/** Announces committed moves on the members' `tasks` topic. */
export async function publishMoves(ctx: Ctx, fired: FiredEvent[], views: Map<string, ReturnType<typeof taskView>>): Promise<void> {
  for (const f of fired) {
    if (f.items) await announce(ctx, f.items);
    await ctx.bus.publish({
      topic: 'tasks',
      id: f.seq,
      data: { event: f.event, from: f.from, to: f.to, task: views.get(f.taskId) ?? { id: f.taskId } },
    });
  }
}

/** A row's view with its submissions. A task open or claimed has none (a submission is the move
 * from claimed to delivered, and nothing moves back), so those are not read. */
export async function viewOf(tx: Tx, row: TaskRow) {
  return taskView(row, row.state === 'open' || row.state === 'claimed' ? [] : await store.submissionsOf(tx, [row.id]));
}
