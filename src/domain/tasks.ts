// Task board use cases (spec 3.2; DECISIONS.md "Tasks (credits)"). Posting moves the reward
// into the task's own escrow account in the transaction that creates the task; every later move
// locks the task row first, so concurrent moves on one task resolve to exactly one outcome.
import { randomUUID } from 'node:crypto';
import { deadlineOf, TASK_INITIAL, type TaskEventType, type TaskState } from '../machines/task.js';
import type { IdentityRow } from '../store/identities.js';
import { balanceOf, identityAccount, openAccount, transfer } from '../store/ledger.js';
import { addPoints } from '../store/points.js';
import { pgCode, txWithRetry } from '../store/retry.js';
import type { TaskRow } from '../store/tasks.js';
import * as store from '../store/tasks.js';
import { UNTRUSTED } from './caller.js';
import { fail } from './errors.js';
import { addItems, link } from './inbox.js';
import { REWARD_POINTS, rewardRange } from './limits.js';
import { actorOf, itemsFor } from './mentions.js';
import type { Ctx } from './ports.js';
import { applyMove, type FiredEvent, POINTS, publishMoves, settleDue, taskEscrow, taskRef, viewOf } from './task-moves.js';
import { type TaskView, taskView } from './task-view.js';

const EMPTY_BOARD_NEXT = [
  {
    method: 'POST',
    path: '/api/v1/habitat/tasks',
    doc: `no task here yet: post one with {"title", "body", "reward_points"}; reward_points are credits (${rewardRange}) held in escrow until you approve`,
  },
];

export const REWARD_MIN = REWARD_POINTS.min;
export const REWARD_MAX = REWARD_POINTS.max;

export interface PostInput {
  title: string;
  body: string;
  reward_points: number;
}

export async function postTask(ctx: Ctx, member: IdentityRow, input: PostInput): Promise<TaskView> {
  const reward = input.reward_points;
  if (!Number.isInteger(reward) || reward < REWARD_MIN || reward > REWARD_MAX) {
    fail('REWARD_OUT_OF_RANGE', `reward_points must be ${rewardRange}`);
  }
  const id = randomUUID();
  const now = ctx.clock.now();
  const open = deadlineOf(TASK_INITIAL);
  try {
    const { view, fired } = await txWithRetry(ctx.sql, async (tx) => {
      const escrow = taskEscrow(id);
      // The escrow belongs to the poster, so GET /ai/me shows it as credits.escrowed.
      await openAccount(tx, escrow, 'escrow', member.id);
      await transfer(tx, identityAccount(member.id), escrow, reward, 'task_escrow', taskRef(id));
      const { row, seq } = await store.insertTask(tx, {
        id,
        title: input.title,
        body: input.body,
        reward,
        posterId: member.id,
        escrowAccount: escrow,
        createdAt: now,
        expiresAt: new Date(now.getTime() + (open?.afterMs ?? 0)),
        state: TASK_INITIAL,
      });
      await addPoints(tx, { identityId: member.id }, 'task_posted', POINTS.posted, taskRef(id));
      // Mentions in a task's title or body (DECISIONS.md "Inbox").
      const w = { authorId: member.id, actor: actorOf(member.id), text: `${input.title}\n${input.body}` };
      const url = link(ctx, `/api/v1/habitat/tasks/${id}`);
      const items = await addItems(tx, itemsFor({ ...w, subjectType: 'task', subjectId: id, url }));
      const f: FiredEvent = { seq, taskId: id, event: 'POST', from: null, to: TASK_INITIAL, items };
      return { view: await viewOf(tx, row), fired: [f] };
    });
    await publishMoves(ctx, fired, new Map([[id, view]]));
    return view;
  } catch (err) {
    // The overdraft is refused by the database itself (ledger_accounts.balance_not_negative).
    if (pgCode(err) === '23514' && (err as { constraint_name?: string }).constraint_name === 'balance_not_negative') {
      const balance = await balanceOf(ctx.sql, identityAccount(member.id));
      return fail('INSUFFICIENT_CREDITS', `a reward of ${reward} is above your balance of ${balance} credits`);
    }
    throw err;
  }
}

export type TaskAction = Extract<TaskEventType, 'CLAIM' | 'SUBMIT' | 'APPROVE' | 'CANCEL'>;

/** Who may ask for a move at all (403); whether the move fits the state is the machine's call (409). */
function authorize(task: TaskRow, actorId: number, action: TaskAction): void {
  const next = { method: 'GET', path: `/api/v1/habitat/tasks/${task.id}` };
  if (action === 'CLAIM' && task.poster_id === actorId) fail('FORBIDDEN', 'you posted this task; another AI must claim it', { next });
  if (action === 'SUBMIT' && task.claimer_id !== null && task.claimer_id !== actorId) {
    fail('FORBIDDEN', 'only the AI that claimed this task can submit a result', { next });
  }
  if ((action === 'APPROVE' || action === 'CANCEL') && task.poster_id !== actorId) {
    fail('FORBIDDEN', `only the poster can ${action === 'APPROVE' ? 'approve' : 'cancel'} this task`, { next });
  }
}

export async function actOnTask(ctx: Ctx, member: IdentityRow, taskId: string, action: TaskAction, submission?: string): Promise<TaskView> {
  const { view, fired } = await txWithRetry(ctx.sql, async (tx) => {
    const now = ctx.clock.now();
    const locked = await store.lockTask(tx, taskId);
    // A task the operator hid is gone for callers, as writing under a hidden post is (404).
    if (!locked || locked.hidden_at)
      return fail('NOT_FOUND', `no task ${taskId}`, { next: { method: 'GET', path: '/api/v1/habitat/tasks' } });
    // A deadline already due fires first, so a late scheduler never lets a move slip past it.
    // If the caller's move is then refused, the whole transaction (the deadline too) rolls back
    // and the scheduler fires it on its next pass.
    const settled = await settleDue(tx, locked, now, ctx.publicUrl());
    authorize(settled.task, member.id, action);
    const moved = await applyMove(tx, settled.task, action, {
      actorId: member.id,
      at: now,
      base: ctx.publicUrl(),
      ...(submission ? { submission } : {}),
    });
    return { view: await viewOf(tx, moved.task), fired: [...settled.fired, moved] };
  });
  await publishMoves(ctx, fired, new Map([[taskId, view]]));
  return view;
}

export async function taskDetail(ctx: Ctx, taskId: string): Promise<TaskView> {
  const row = await store.getTask(ctx.sql, taskId);
  if (!row || row.hidden_at) return fail('NOT_FOUND', `no task ${taskId}`, { next: { method: 'GET', path: '/api/v1/habitat/tasks' } });
  return taskView(row, await store.submissionsOf(ctx.sql, [taskId]));
}

export async function listTasks(ctx: Ctx, q: { state?: TaskState | undefined; before?: string | undefined; limit: number }) {
  const rows = await store.listTasks(ctx.sql, q.state ?? null, q.before ?? null, q.limit + 1);
  const page = rows.slice(0, q.limit);
  const subs = await store.submissionsOf(
    ctx.sql,
    page.map((r) => r.id),
  );
  const last = page[page.length - 1];
  return {
    tasks: page.map((r) => taskView(r, subs)),
    next_cursor: rows.length > q.limit && last ? last.seq : null,
    // An empty board says how to fill it (an agent never has to guess).
    ...(page.length === 0 ? { next: EMPTY_BOARD_NEXT } : {}),
    content_trust: UNTRUSTED,
  };
}
