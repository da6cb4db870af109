// SQL for the task board (sql/006_tasks.sql). Every read that precedes a move locks the task row
// (FOR UPDATE OF t), so concurrent moves on one task queue up and each sees the last one's result.
import type { Sql } from 'postgres';
import type { TaskState } from '../machines/task.js';
import type { NewItem, OwnedItem } from './inbox.js';
import type { Tx } from './ledger.js';
import { PREPARED } from './prepared.js';

export interface TaskRow {
  id: string;
  seq: string;
  state: TaskState;
  version: number;
  title: string;
  body: string;
  reward_points: number;
  poster_id: number;
  poster_name: string;
  claimer_id: number | null;
  claimer_name: string | null;
  escrow_account: string;
  created_at: Date;
  expires_at: Date;
  claimed_at: Date | null;
  claim_expires_at: Date | null;
  delivered_at: Date | null;
  approve_by: Date | null;
  approved_at: Date | null;
  approved_how: 'poster' | 'automatic' | null;
  closed_at: Date | null;
  closed_reason: 'cancelled' | 'expired' | null;
  due_at: Date | null;
  /** Set by the operator (sql/011): a hidden task is left out of every read and refuses moves. */
  hidden_at: Date | null;
}

export interface SubmissionRow {
  id: string;
  task_id: string;
  author_id: number;
  author_name: string;
  body: string;
  created_at: Date;
}

/** Columns a move may change. */
export type TaskPatch = Partial<
  Pick<
    TaskRow,
    | 'state'
    | 'claimer_id'
    | 'expires_at'
    | 'claimed_at'
    | 'claim_expires_at'
    | 'delivered_at'
    | 'approve_by'
    | 'approved_at'
    | 'approved_how'
    | 'closed_at'
    | 'closed_reason'
  >
>;

/** A task row's columns, from `t` (the task), `p` (its poster) and `c` (its claimer). */
const ROW_COLUMNS = `
  SELECT t.id::text AS id, t.seq::text AS seq, t.state, t.version, t.title, t.body, t.reward_points,
         t.poster_id::int AS poster_id, p.name AS poster_name, t.claimer_id::int AS claimer_id, c.name AS claimer_name,
         t.escrow_account, t.created_at, t.expires_at, t.claimed_at, t.claim_expires_at, t.delivered_at, t.approve_by,
         t.approved_at, t.approved_how, t.closed_at, t.closed_reason, t.due_at, t.hidden_at`;

/** Joins the poster (`p`) and claimer (`c`) of the task `t`. */
const PEOPLE = `JOIN identities p ON p.id = t.poster_id LEFT JOIN identities c ON c.id = t.claimer_id`;

const SELECT = `${ROW_COLUMNS} FROM tasks t ${PEOPLE}`;

export interface NewTask {
  id: string;
  title: string;
  body: string;
  reward: number;
  posterId: number;
  escrowAccount: string;
  createdAt: Date;
  expiresAt: Date;
  /** The machine's initial state (TASK_INITIAL): the task's state and its POST event's to_state. */
  state: TaskState;
}

/** Locks these tasks (in id order, one order for every writer) and reads them as lockTask does.
 * (The statement, unsent: the caller sends it, src/store/pipelined-tx.ts.) */
export function lockTasks(tx: Tx, ids: string[]) {
  return tx.unsafe<TaskRow[]>(`${SELECT} WHERE t.id = ANY($1::uuid[]) ORDER BY t.id FOR UPDATE OF t`, [ids], PREPARED);
}

/** These tasks as getTask reads them, in no particular order (unsent, as lockTasks). */
export function getTasks(tx: Tx, ids: string[]) {
  return tx.unsafe<TaskRow[]>(`${SELECT} WHERE t.id = ANY($1::uuid[])`, [ids], PREPARED);
}

/** The rows task moves write (sql/functions/task_moves_apply.sql lists each one's fields). */
export interface TaskWrites {
  accounts: { id: string; kind: 'escrow'; identity_id: number }[];
  transfers: { from: string; to: string; amount: number; kind: string; ref: string }[];
  tasks: {
    id: string;
    state: TaskState;
    title: string;
    body: string;
    reward: number;
    poster_id: number;
    escrow_account: string;
    created_at: Date;
    expires_at: Date;
  }[];
  moves: { id: string; version: number; patch: TaskPatch }[];
  events: { task_id: string; version: number; event: string; from: TaskState | null; to: TaskState; actor_id: number | null; at: Date }[];
  points: { identity_id: number; kind: string; points: number; ref: string }[];
  submissions: { task_id: string; author_id: number; body: string; created_at: Date }[];
  items: NewItem[];
}

export const noWrites = (): TaskWrites => ({
  accounts: [],
  transfers: [],
  tasks: [],
  moves: [],
  events: [],
  points: [],
  submissions: [],
  items: [],
});

export interface Applied {
  seqs: string[];
  items: (OwnedItem | null)[];
}

/** Writes them in one round trip (applyWritesQuery), in the caller's transaction. */
export async function applyWrites(tx: Tx, w: TaskWrites): Promise<Applied> {
  const { query, answer } = applyWritesQuery(tx, w);
  return answer(await query);
}

/**
 * The statement that writes them (task_moves_apply), unsent, and how to read its answer: each
 * event's seq in the order of `events`, and each item as inbox_add answers it (null: no such
 * member), in the order of `items`. Before, a move was 3 (a claim) to 9 (an approval) statements.
 */
export function applyWritesQuery(tx: Tx, w: TaskWrites) {
  // In owner order, so concurrent writers lock members' inbox counters in one order (no deadlock);
  // answered in the caller's order.
  const order = w.items.map((_, i) => i).sort((a, b) => (w.items[a] as NewItem).owner - (w.items[b] as NewItem).owner || a - b);
  const items = order.map((i) => {
    const it = w.items[i] as NewItem;
    return {
      owner: it.owner,
      kind: it.kind,
      actor: it.actor,
      subject_type: it.subjectType,
      subject_id: it.subjectId,
      url: it.url,
      excerpt: it.excerpt,
    };
  });
  const query = tx.unsafe<{ out: Applied }[]>(
    'SELECT task_moves_apply($1::text::jsonb) AS out',
    [JSON.stringify({ ...w, items })],
    PREPARED,
  );
  const answer = (rows: { out: Applied }[]): Applied => {
    const row = rows[0];
    if (!row) throw new Error('task_moves_apply returned nothing');
    const answered: (OwnedItem | null)[] = new Array(order.length).fill(null);
    order.forEach((i, k) => {
      answered[i] = row.out.items[k] ?? null;
    });
    return { seqs: row.out.seqs, items: answered };
  };
  return { query, answer };
}

export async function lockTask(tx: Tx, id: string): Promise<TaskRow | null> {
  const rows = await tx.unsafe<TaskRow[]>(`${SELECT} WHERE t.id = $1 FOR UPDATE OF t`, [id], PREPARED);
  return rows[0] ?? null;
}

/**
 * The most overdue task not being moved by anyone else. SKIP LOCKED lets several nodes (or
 * several passes) share the queue without waiting on, or repeating, each other's work.
 */
export async function lockNextDue(tx: Tx, now: Date): Promise<TaskRow | null> {
  const rows = await tx.unsafe<TaskRow[]>(`${SELECT} WHERE t.due_at <= $1 ORDER BY t.due_at LIMIT 1 FOR UPDATE OF t SKIP LOCKED`, [now]);
  return rows[0] ?? null;
}

export async function getTask(sql: Tx, id: string): Promise<TaskRow | null> {
  const rows = await sql.unsafe<TaskRow[]>(`${SELECT} WHERE t.id = $1`, [id], PREPARED);
  return rows[0] ?? null;
}

/** Visible tasks, newest first; `beforeSeq` is the keyset cursor. */
export async function listTasks(sql: Sql, state: TaskState | null, beforeSeq: string | null, limit: number): Promise<TaskRow[]> {
  return sql.unsafe<TaskRow[]>(
    `${SELECT} WHERE t.hidden_at IS NULL AND ($1::text IS NULL OR t.state = $1) AND ($2::bigint IS NULL OR t.seq < $2)
     ORDER BY t.seq DESC LIMIT $3`,
    [state, beforeSeq, limit],
  );
}

/** Visible submissions of the given tasks (a hidden one is left out of the task's record). */
export async function submissionsOf(sql: Tx, taskIds: string[]): Promise<SubmissionRow[]> {
  if (taskIds.length === 0) return [];
  return submissionsQuery(sql, taskIds);
}

/** submissionsOf's statement, unsent (as lockTasks). */
export function submissionsQuery(sql: Tx, taskIds: string[]) {
  return sql.unsafe<SubmissionRow[]>(
    `SELECT s.id::text AS id, s.task_id::text AS task_id, s.author_id::int AS author_id, i.name AS author_name, s.body,
            s.created_at
     FROM task_submissions s JOIN identities i ON i.id = s.author_id
     WHERE s.task_id = ANY($1::uuid[]) AND s.hidden_at IS NULL ORDER BY s.created_at`,
    [taskIds],
    PREPARED,
  );
}
