// Grouped task writes (DECISIONS.md "Tasks (credits)"; docs/tasks.md "How a move is written"):
// concurrent posts and moves share one transaction and one commit (src/store/group-commit.ts).
// Each write is decided in the node on the locked rows (the machine, the authorization, due
// deadlines) and every row the group writes goes in one statement (task_moves_apply).
import { deadlineOf, TASK_INITIAL } from '../machines/task.js';
import { GroupCommit } from '../store/group-commit.js';
import { checkMemberTokens } from '../store/identities.js';
import type { Tx } from '../store/ledger.js';
import { type PipelinedTx, pipelinedTx } from '../store/pipelined-tx.js';
import { txWithRetry } from '../store/retry.js';
import type { SubmissionRow, TaskRow, TaskWrites } from '../store/tasks.js';
import * as store from '../store/tasks.js';
import { noWrites } from '../store/tasks.js';
import { CommonsError, fail, isOutage } from './errors.js';
import { link } from './inbox.js';
import { actorOf, itemsFor } from './mentions.js';
import type { Ctx } from './ports.js';
import { firedOf, type PlannedMove, planDue, planMove, planPost, taskEscrow } from './task-moves.js';
import { taskView } from './task-view.js';
import type { TaskAction, TaskDone, TaskWrite } from './task-writes.js';

/** The task a write concerns (a post's new id). */
export const taskOf = (wr: TaskWrite): string => (wr.kind === 'post' ? wr.id : wr.taskId);

/** A write decided: its moves, and the row it leaves when that row is known without reading it
 * back (null: a new task, whose seq and poster's name the database gives). */
interface Planned {
  moves: PlannedMove[];
  row: TaskRow | null;
}

/** Decides one write on the locked rows, adding its rows to `w`; throws a refusal. */
function planWrite(ctx: Ctx, w: TaskWrites, wr: TaskWrite, locked: Map<string, TaskRow>, now: Date): Planned {
  const base = ctx.publicUrl();
  if (wr.kind === 'post') {
    const open = deadlineOf(TASK_INITIAL);
    const { member, input, id } = wr;
    // Mentions in a task's title or body (DECISIONS.md "Inbox").
    const said = { authorId: member.id, actor: actorOf(member.id), text: `${input.title}\n${input.body}` };
    const url = link(ctx, `/api/v1/habitat/tasks/${id}`);
    const task = {
      id,
      title: input.title,
      body: input.body,
      reward: input.reward_points,
      posterId: member.id,
      escrowAccount: taskEscrow(id),
      createdAt: now,
      expiresAt: new Date(now.getTime() + (open?.afterMs ?? 0)),
      state: TASK_INITIAL,
    };
    return { moves: [planPost(w, task, itemsFor({ ...said, subjectType: 'task', subjectId: id, url }))], row: null };
  }
  const row = locked.get(wr.taskId);
  // A task the operator hid is gone for callers, as writing under a hidden post is (404).
  if (!row || row.hidden_at) return fail('NOT_FOUND', `no task ${wr.taskId}`, { next: { method: 'GET', path: '/api/v1/habitat/tasks' } });
  // A deadline already due fires first, so a late scheduler never lets a move slip past it.
  // If the caller's move is then refused, neither is written (the deadline fires on the
  // scheduler's next pass).
  const settled = planDue(w, row, now, base);
  authorize(settled.task, wr.member.id, wr.action);
  const moved = planMove(w, settled.task, wr.action, {
    actorId: wr.member.id,
    at: now,
    base,
    ...(wr.submission ? { submission: wr.submission } : {}),
  });
  // The row as the moves leave it (src/domain/task-moves.ts `patched`: the columns written, the
  // version, due_at as the table derives it; the names read with the lock, in this transaction).
  // A claim's claimer is the writer, whose name the node holds: a member's name never changes
  // (no statement updates identities.name), so the row is not read back for it.
  const task = wr.action === 'CLAIM' ? { ...moved.task, claimer_name: wr.member.name } : moved.task;
  return { moves: [...settled.moves, moved.move], row: task };
}

/** How a commit of task writes reaches the database: the moves' rows locked, then the writes
 * sent with the reads of the answers (and, on a pipelined transaction, with COMMIT). */
interface TaskTx {
  /** Refuses the transaction (STALE_TOKEN) unless each member still holds its token. */
  check(members: { id: number; tokenHash: Buffer }[]): Promise<unknown>;
  lock(ids: string[]): Promise<TaskRow[]>;
  /** Writes `w`, reading back the rows of `ids` and the submissions of `withSubmissions`. */
  write(w: TaskWrites, ids: string[], withSubmissions: string[], last: boolean): Promise<[store.Applied, TaskRow[], SubmissionRow[]]>;
}

/** A transaction of postgres.js's own (sql.begin, retried): where the node's group is not running,
 * as in an idempotent write's transaction (its `begin` a savepoint). */
const ownTx = (tx: Tx): TaskTx => ({
  check: async (members) => checkMemberTokens(tx, members),
  lock: async (ids) => store.lockTasks(tx, ids),
  write: (w, ids, subs) =>
    Promise.all([store.applyWrites(tx, w), ids.length > 0 ? store.getTasks(tx, ids) : [], store.submissionsOf(tx, subs)]),
});

/** A pipelined transaction (src/store/pipelined-tx.ts): BEGIN goes with the lock, COMMIT with the
 * writes and reads, so a group of posts is one round trip and a group of moves two. */
const pipelined = (tx: PipelinedTx): TaskTx => ({
  check: (members) => tx.send(checkMemberTokens(tx.sql, members)),
  lock: (ids) => tx.send(store.lockTasks(tx.sql, ids)),
  write: async (w, ids, subs, last) => {
    const applied = store.applyWritesQuery(tx.sql, w);
    const sent = [tx.send(applied.query), ids.length > 0 ? tx.send(store.getTasks(tx.sql, ids)) : Promise.resolve([])] as const;
    const submissions = subs.length > 0 ? tx.send(store.submissionsQuery(tx.sql, subs)) : Promise.resolve([]);
    const committed = last ? tx.commit() : Promise.resolve();
    const [out, rows, got] = await Promise.all([sent[0], sent[1], submissions, committed]);
    return [applied.answer(out), rows, got];
  },
});

/**
 * Commits task writes together: one transaction, the tasks locked in one statement (id order),
 * each write decided in the node (the machine, the authorization, due deadlines) and all their
 * rows written by one statement (sql/functions/task_moves_apply.sql), the new tasks read back for
 * the answers in the same round trip (the moves' rows are the ones decided). A refused write (4xx) is left out and answered with its
 * refusal; a failure of the database's (an overdraft) fails the whole call, and the group commit
 * retries its writes one by one. Two writes on one task go in turns within the transaction, in
 * submission order, the later deciding from the row the earlier left (one of two claims wins).
 */
export async function commitTaskWrites(ctx: Ctx, batch: TaskWrite[], own = false): Promise<TaskDone[]> {
  if (own) return txWithRetry(ctx.sql, (tx) => decideAndWrite(ctx, batch, ownTx(tx)));
  return pipelinedTx(ctx.sql, (tx) => decideAndWrite(ctx, batch, pipelined(tx)));
}

/** `p`'s answer once `check` has answered too; `check`'s failure first (a statement sent after a
 * failed one fails only because of it). */
async function behind<T>(check: Promise<unknown> | null, p: Promise<T>): Promise<T> {
  if (!check) return p;
  const [c, r] = await Promise.allSettled([check, p]);
  if (c.status === 'rejected') throw c.reason;
  if (r.status === 'rejected') throw r.reason;
  return r.value;
}

async function decideAndWrite(ctx: Ctx, batch: TaskWrite[], tx: TaskTx): Promise<TaskDone[]> {
  const now = ctx.clock.now();
  // The tokens of members read from the node's cache, checked by the transaction's first
  // statement (sent with BEGIN, answered with the lock or, for posts alone, with the writes), so
  // no write is decided for a token rotated away, and the check costs no round trip.
  const tokens = batch.flatMap((wr) => (wr.tokenHash ? [{ id: wr.member.id, tokenHash: wr.tokenHash }] : []));
  let checked: Promise<unknown> | null = tokens.length > 0 ? tx.check(tokens) : null;
  const done: TaskDone[] = new Array(batch.length);
  let pending = batch.map((_, i) => i);
  while (pending.length > 0) {
    const turn: number[] = [];
    const later: number[] = [];
    const moving = new Set<string>();
    for (const i of pending) {
      const wr = batch[i] as TaskWrite;
      if (wr.kind === 'act') {
        if (moving.has(wr.taskId)) {
          later.push(i);
          continue;
        }
        moving.add(wr.taskId);
      }
      turn.push(i);
    }
    const locked = new Map(moving.size > 0 ? (await behind(checked, tx.lock([...moving]))).map((r) => [r.id, r]) : []);
    if (moving.size > 0) checked = null;
    const w = noWrites();
    const planned: ({ i: number; at: { events: number; items: number } } & Planned)[] = [];
    for (const i of turn) {
      const own = noWrites();
      try {
        const { moves, row } = planWrite(ctx, own, batch[i] as TaskWrite, locked, now);
        planned.push({ i, moves, row, at: { events: w.events.length, items: w.items.length } });
        for (const k of Object.keys(w) as (keyof TaskWrites)[]) (w[k] as unknown[]).push(...own[k]);
      } catch (err) {
        if (!(err instanceof CommonsError)) throw err;
        done[i] = { ok: false, err };
      }
    }
    if (planned.length > 0) {
      const idOf = (p: { i: number }) => taskOf(batch[p.i] as TaskWrite);
      // A task open or claimed has no submissions (nothing moves back to those states).
      const withSubs = planned.filter((p) => p.moves.some((m) => m.to !== 'open' && m.to !== 'claimed')).map(idOf);
      // Only the rows not known from the decision are read back (new tasks).
      const unknown = planned.filter((p) => p.row === null).map(idOf);
      const [out, rows, subs] = await behind(checked, tx.write(w, unknown, withSubs, later.length === 0));
      checked = null;
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const p of planned) {
        const row = p.row ?? byId.get(idOf(p));
        if (!row) throw new Error(`task ${idOf(p)} not read back`);
        done[p.i] = { ok: true, view: taskView(row, subs), fired: firedOf(p.moves, out, p.at) };
      }
    }
    pending = later;
  }
  // (Every turn awaits the check with its lock or its writes; this only keeps it answered if not.)
  if (checked) await checked;
  return done;
}

/** Starts this node's grouped task writes (the composition root calls it once): concurrent posts
 * and moves share one transaction and one commit (src/store/group-commit.ts). Returns its stop. */
export function openTaskWrites(ctx: Ctx): () => void {
  const group = new GroupCommit(
    (batch: TaskWrite[]) => commitTaskWrites(ctx, batch),
    500,
    undefined,
    isOutage,
    // The embedded store runs one statement at a time: a second group would only queue for it.
    ctx.config.databaseUrl ? ctx.config.taskCommitLanes : 1,
    // GroupCommit's defaults: a second batch beside a commit from one write; half a commit's time
    // waited for the writers just answered.
    1,
    0.5,
    // Each batch answered once committed: a batch waiting on a task another transaction holds
    // holds back no batch of other tasks (no answer of a task write depends on another's order).
    false,
  );
  ctx.services.taskWrites = group;
  return () => {
    if (ctx.services.taskWrites === group) ctx.services.taskWrites = null;
  };
}

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
