// Decides task moves inside the caller's transaction: the machine decides the next state, and the
// task row, the ledger, the points, the event log and the inbox items the move writes are handed
// to one statement (store.applyWrites), so they change together or not at all, and the moves of
// several members can be written, and committed, together (src/domain/task-commit.ts).
import { deadlineOf, type TaskEventType, taskNext } from '../machines/task.js';
import { escrowAccount, identityAccount, type Tx } from '../store/ledger.js';
import type { TaskPatch, TaskRow, TaskWrites } from '../store/tasks.js';
import * as store from '../store/tasks.js';
import { noWrites } from '../store/tasks.js';
import { fail } from './errors.js';
import { announce, type NewItem, type OwnedItem } from './inbox.js';
import type { Ctx } from './ports.js';
import { taskItems } from './task-inbox.js';
import { taskView } from './task-view.js';
import type { FiredEvent } from './task-writes.js';

/** Score events (spec 3.4). */
export const POINTS = { posted: 7, solved: 30, approved: 5 } as const;

export const taskRef = (id: string): string => `task:${id}`;
export const taskEscrow = (id: string): string => escrowAccount(taskRef(id));

export type { FiredEvent } from './task-writes.js';

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

/** A move decided but not yet written: where its event and its inbox items sit in the writes. */
export interface PlannedMove extends Omit<FiredEvent, 'seq' | 'items'> {
  event_at: number;
  items_from: number;
  items_to: number;
}

/** The row a patch leaves (the columns a later move of the same transaction decides from). */
function patched(task: TaskRow, patch: TaskPatch): TaskRow {
  const t: TaskRow = { ...task, ...patch, version: task.version + 1 };
  t.due_at = t.state === 'open' ? t.expires_at : t.state === 'claimed' ? t.claim_expires_at : t.state === 'delivered' ? t.approve_by : null;
  if (t.claimer_id === null) t.claimer_name = null;
  return t;
}

const transferOf = (from: string, to: string, amount: number, kind: string, ref: string) => ({ from, to, amount, kind, ref });

/**
 * Decides one move on a locked task row and adds what it writes to `w` (written by
 * store.applyWrites, sql/functions/task_moves_apply.sql); refuses (409 INVALID_STATE) what the
 * machine refuses. Returns the move and the row it leaves.
 */
export function planMove(w: TaskWrites, task: TaskRow, event: TaskEventType, m: MoveInput): { move: PlannedMove; task: TaskRow } {
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
      w.submissions.push({ task_id: task.id, author_id: m.actorId as number, body: m.submission as string, created_at: m.at });
      patch.delivered_at = m.at;
      break;
    case 'APPROVE':
    case 'AUTO_APPROVE': {
      const solver = task.claimer_id as number;
      Object.assign(patch, { approved_at: m.at, approved_how: event === 'APPROVE' ? 'poster' : 'automatic' });
      w.transfers.push(transferOf(task.escrow_account, identityAccount(solver), task.reward_points, 'task_reward', ref));
      w.points.push({ identity_id: solver, kind: 'task_solved', points: POINTS.solved, ref });
      // The approval points reward the poster's act of reviewing; an automatic approval is the
      // poster not acting, so it earns nothing (docs/tasks.md).
      if (event === 'APPROVE') w.points.push({ identity_id: task.poster_id, kind: 'task_approved', points: POINTS.approved, ref });
      break;
    }
    case 'CANCEL':
    case 'EXPIRE_UNCLAIMED':
      Object.assign(patch, { closed_at: m.at, closed_reason: event === 'CANCEL' ? 'cancelled' : 'expired' });
      w.transfers.push(transferOf(task.escrow_account, identityAccount(task.poster_id), task.reward_points, 'task_refund', ref));
      // Withdrawing a task withdraws its posting points, so post-and-cancel cannot farm score.
      if (event === 'CANCEL') w.points.push({ identity_id: task.poster_id, kind: 'task_withdrawn', points: -POINTS.posted, ref });
      break;
    case 'CLAIM_LAPSED':
      // The claimer loses the claim, nothing else (DECISIONS "Beyond the spec").
      Object.assign(patch, { claimer_id: null, claimed_at: null, claim_expires_at: null });
      break;
  }
  w.moves.push({ id: task.id, version: task.version, patch });
  w.events.push({ task_id: task.id, version: task.version + 1, event, from: task.state, to, actor_id: m.actorId, at: m.at });
  const items = taskItems(task, event, m.actorId, `${m.base}/api/v1/habitat/tasks/${task.id}`);
  const items_from = w.items.length;
  w.items.push(...items);
  const move: PlannedMove = {
    taskId: task.id,
    event,
    from: task.state,
    to,
    event_at: w.events.length - 1,
    items_from,
    items_to: w.items.length,
  };
  return { move, task: patched(task, patch) };
}

/** What a new task writes: its escrow (the poster's, so GET /ai/me shows it as credits.escrowed),
 * the reward moved into it, the task and its POST event, the posting points and `items`. */
export function planPost(w: TaskWrites, t: store.NewTask, items: NewItem[]): PlannedMove {
  const ref = taskRef(t.id);
  w.accounts.push({ id: t.escrowAccount, kind: 'escrow', identity_id: t.posterId });
  w.transfers.push(transferOf(identityAccount(t.posterId), t.escrowAccount, t.reward, 'task_escrow', ref));
  w.tasks.push({
    id: t.id,
    state: t.state,
    title: t.title,
    body: t.body,
    reward: t.reward,
    poster_id: t.posterId,
    escrow_account: t.escrowAccount,
    created_at: t.createdAt,
    expires_at: t.expiresAt,
  });
  w.events.push({ task_id: t.id, version: 0, event: 'POST', from: null, to: t.state, actor_id: t.posterId, at: t.createdAt });
  w.points.push({ identity_id: t.posterId, kind: 'task_posted', points: POINTS.posted, ref });
  const items_from = w.items.length;
  w.items.push(...items);
  return { taskId: t.id, event: 'POST', from: null, to: t.state, event_at: w.events.length - 1, items_from, items_to: w.items.length };
}

/** The planned moves as committed: each with its event's seq and the items it wrote. */
export function firedOf(
  moves: PlannedMove[],
  out: { seqs: string[]; items: (OwnedItem | null)[] },
  offset = { events: 0, items: 0 },
): FiredEvent[] {
  return moves.map(({ event_at, items_from, items_to, ...f }) => ({
    ...f,
    seq: out.seqs[offset.events + event_at] as string,
    items: out.items.slice(offset.items + items_from, offset.items + items_to).filter((i): i is OwnedItem => i !== null),
  }));
}

/**
 * Decides every deadline of a locked task that is due at `now`, in order, adding their writes to
 * `w`. Each fires at its own due time, so the outcome never depends on how late the scheduler (or
 * a caller) noticed it.
 */
export function planDue(w: TaskWrites, task: TaskRow, now: Date, base: string): { task: TaskRow; moves: PlannedMove[] } {
  const moves: PlannedMove[] = [];
  let t = task;
  while (t.due_at && t.due_at.getTime() <= now.getTime()) {
    const deadline = deadlineOf(t.state);
    if (!deadline) break;
    const planned = planMove(w, t, deadline.event, { actorId: null, at: t.due_at, base });
    moves.push(planned.move);
    t = planned.task;
  }
  return { task: t, moves };
}

/** Fires every deadline of a locked task due at `now` and writes them (the scheduler's pass);
 * returns the task as it now reads. */
export async function settleDue(tx: Tx, task: TaskRow, now: Date, base: string): Promise<{ task: TaskRow; fired: FiredEvent[] }> {
  const w = noWrites();
  const planned = planDue(w, task, now, base);
  if (planned.moves.length === 0) return { task, fired: [] };
  const out = await store.applyWrites(tx, w);
  return { task: (await store.getTask(tx, task.id)) ?? planned.task, fired: firedOf(planned.moves, out) };
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
