// Task board use cases (spec 3.2; DECISIONS.md "Tasks (credits)"). Posting moves the reward
// into the task's own escrow account in the transaction that creates the task; every later move
// locks the task row first, so concurrent moves on one task resolve to exactly one outcome.
import { randomUUID } from 'node:crypto';
import type { TaskState } from '../machines/task.js';
import { type IdentityRow, STALE_TOKEN } from '../store/identities.js';
import { balanceOf, identityAccount } from '../store/ledger.js';
import { pgCode } from '../store/retry.js';
import * as store from '../store/tasks.js';
import { UNTRUSTED } from './caller.js';
import { deadMemberToken, fail } from './errors.js';
import { REWARD_POINTS, rewardRange } from './limits.js';
import type { Ctx } from './ports.js';
import { commitTaskWrites, taskOf } from './task-commit.js';
import { publishMoves } from './task-moves.js';
import { type TaskView, taskView } from './task-view.js';
import type { PostInput, TaskAction, TaskDone, TaskWrite } from './task-writes.js';

export type { PostInput, TaskAction, TaskDone, TaskWrite } from './task-writes.js';

const EMPTY_BOARD_NEXT = [
  {
    method: 'POST',
    path: '/api/v1/habitat/tasks',
    doc: `no task here yet: post one with {"title", "body", "reward_points"}; reward_points are credits (${rewardRange}) held in escrow until you approve`,
  },
];

export const REWARD_MIN = REWARD_POINTS.min;
export const REWARD_MAX = REWARD_POINTS.max;

/** Who writes a task: a member and, when the node's token cache resolved it (a caller the
 * transport marked unchecked, src/domain/caller.ts), the hash of its token, which the write's own
 * transaction checks is still the member's (401 otherwise). */
export type TaskWriter = { member: IdentityRow; tokenHash?: Buffer | undefined };

/** Posts a task for `by.member`. */
export async function postTask(ctx: Ctx, by: TaskWriter, input: PostInput): Promise<TaskView> {
  const reward = input.reward_points;
  if (!Number.isInteger(reward) || reward < REWARD_MIN || reward > REWARD_MAX) {
    fail('REWARD_OUT_OF_RANGE', `reward_points must be ${rewardRange}`);
  }
  try {
    return await submitMove(ctx, { kind: 'post', member: by.member, tokenHash: by.tokenHash, input, id: randomUUID() });
  } catch (err) {
    // The overdraft is refused by the database itself (ledger_accounts.balance_not_negative).
    if (pgCode(err) === '23514' && (err as { constraint_name?: string }).constraint_name === 'balance_not_negative') {
      const balance = await balanceOf(ctx.sql, identityAccount(by.member.id));
      return fail('INSUFFICIENT_CREDITS', `a reward of ${reward} is above your balance of ${balance} credits`);
    }
    throw err;
  }
}

/** Runs one write through the node's grouped task writes (or alone when they are not started, as
 * in an idempotent write's transaction), then announces its moves. */
async function submitMove(ctx: Ctx, wr: TaskWrite): Promise<TaskView> {
  const group = ctx.services.taskWrites;
  let done: TaskDone;
  try {
    done = group ? await group.submit(wr) : ((await commitTaskWrites(ctx, [wr], true))[0] as TaskDone);
  } catch (err) {
    // The member's token was rotated or revoked (on any node) since this node cached it: refused
    // by the write's own transaction, and, in a group, alone (the group went again one by one).
    if (pgCode(err) === STALE_TOKEN) deadMemberToken();
    throw err;
  }
  if (!done.ok) throw done.err;
  await publishMoves(ctx, done.fired, new Map([[taskOf(wr), done.view]]));
  return done.view;
}

/** Moves a task for `by.member` (its token checked as postTask checks it). */
export async function actOnTask(ctx: Ctx, by: TaskWriter, taskId: string, action: TaskAction, submission?: string): Promise<TaskView> {
  return submitMove(ctx, { kind: 'act', member: by.member, tokenHash: by.tokenHash, taskId, action, submission });
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
