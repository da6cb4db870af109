// SQL for the task board (sql/006_tasks.sql). Every read that precedes a move locks the task row
// (FOR UPDATE OF t), so concurrent moves on one task queue up and each sees the last one's result.
import type { Sql } from 'postgres';
import type { TaskState } from '../machines/task.js';
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

// The end of a statement that writes a task (CTE `t`) and its event (CTE `e`): the row as lockTask
// reads it, with the event's seq.
const WRITTEN_ROW = `${ROW_COLUMNS}, (SELECT seq::text FROM e) AS event_seq
     FROM t ${PEOPLE}`;

type WrittenRow = TaskRow & { event_seq: string };

function writtenRow(rows: WrittenRow[], missing: string): { row: TaskRow; seq: string } {
  const written = rows[0];
  if (!written) throw new Error(missing);
  const { event_seq, ...row } = written;
  return { row, seq: event_seq };
}

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

/**
 * Inserts a new task with its POST event row in one statement, and returns the row as lockTask
 * reads it, with the event's seq (before: an insert, an event insert and a read, three round trips).
 */
export async function insertTask(tx: Tx, n: NewTask): Promise<{ row: TaskRow; seq: string }> {
  const rows = await tx.unsafe<WrittenRow[]>(
    `WITH t AS (
       INSERT INTO tasks (id, state, title, body, reward_points, poster_id, escrow_account, created_at, expires_at)
       VALUES ($1, $9, $2, $3, $4, $5, $6, $7, $8)
       RETURNING *
     ), e AS (
       INSERT INTO task_events (task_id, version, event, from_state, to_state, actor_id, at)
       SELECT t.id, 0, 'POST', NULL, t.state, t.poster_id, t.created_at FROM t
       RETURNING seq
     )
     ${WRITTEN_ROW}`,
    [n.id, n.title, n.body, n.reward, n.posterId, n.escrowAccount, n.createdAt, n.expiresAt, n.state] as never[],
    PREPARED,
  );
  return writtenRow(rows, 'insert tasks returned nothing');
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

export interface NewTaskEvent {
  taskId: string;
  version: number;
  event: string;
  from: TaskState | null;
  to: TaskState;
  actorId: number | null;
  at: Date;
}

/**
 * One move of a locked task in one statement: the row's patch and version, the move's event row,
 * and the row as it now reads (what lockTask reads), with the event's seq. Before, the update, the
 * event and a read of the row were three round trips of the move's transaction.
 */
export async function moveTask(
  tx: Tx,
  id: string,
  version: number,
  patch: TaskPatch,
  e: Omit<NewTaskEvent, 'taskId' | 'version'>,
): Promise<{ row: TaskRow; seq: string }> {
  // Column names come from TaskPatch's keys (this code's, never a caller's text); values are parameters.
  const cols = Object.keys(patch) as (keyof TaskPatch)[];
  const n = cols.length;
  const rows = await tx.unsafe<WrittenRow[]>(
    `WITH t AS (
       UPDATE tasks SET ${cols.map((c, i) => `"${c}" = $${i + 1}`).join(', ')}, version = $${n + 2}
       WHERE id = $${n + 1} AND version = $${n + 3}
       RETURNING *
     ), e AS (
       INSERT INTO task_events (task_id, version, event, from_state, to_state, actor_id, at)
       SELECT t.id, t.version, $${n + 4}::text, $${n + 5}::text, $${n + 6}::text, $${n + 7}::bigint, $${n + 8}::timestamptz FROM t
       RETURNING seq
     )
     ${WRITTEN_ROW}`,
    [...cols.map((c) => patch[c]), id, version + 1, version, e.event, e.from, e.to, e.actorId, e.at] as never[],
    PREPARED,
  );
  // The row is locked, so the version cannot have moved; this guards the invariant anyway.
  return writtenRow(rows, `task ${id} changed under its lock`);
}

export async function insertSubmission(tx: Tx, taskId: string, authorId: number, body: string, at: Date): Promise<void> {
  await tx`INSERT INTO task_submissions (task_id, author_id, body, created_at) VALUES (${taskId}, ${authorId}, ${body}, ${at})`;
}

/** Visible submissions of the given tasks (a hidden one is left out of the task's record). */
export async function submissionsOf(sql: Tx, taskIds: string[]): Promise<SubmissionRow[]> {
  if (taskIds.length === 0) return [];
  return sql.unsafe<SubmissionRow[]>(
    `SELECT s.id::text AS id, s.task_id::text AS task_id, s.author_id::int AS author_id, i.name AS author_name, s.body,
            s.created_at
     FROM task_submissions s JOIN identities i ON i.id = s.author_id
     WHERE s.task_id = ANY($1::uuid[]) AND s.hidden_at IS NULL ORDER BY s.created_at`,
    [taskIds],
    PREPARED,
  );
}
