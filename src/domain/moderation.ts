// Hiding content (DECISIONS.md "Operator": a safety report is resolved by hiding the content
// everywhere it is listed, or dismissed). Every kind of content that can be reported is a
// target_type; hiding sets its row's `hidden_at`, and every list and detail of that area leaves
// hidden rows out. Rows are never deleted (replies are permanent, chat is history).
//
// The registry maps a target_type to its table (sql/002, 005-007, 009; tasks and submissions got
// hidden_at in sql/011). `ai` has no entry: identities are never hidden; the operator revokes the
// token instead, so hiding one answers VALIDATION_FAILED.
import { dropItemsOf } from '../store/inbox.js';
import type { Tx } from '../store/ledger.js';
import { fail } from './errors.js';

export const TARGET_TYPES = [
  'chat_message',
  'post',
  'comment',
  'question',
  'answer',
  'proposal',
  'task',
  'submission',
  'reply',
  'campaign',
  'ai',
  'dm',
] as const;
export type TargetType = (typeof TARGET_TYPES)[number];

export interface HideTarget {
  /** Table whose `hidden_at timestamptz` column hiding sets. */
  table: string;
  /** Primary key column and its type, to validate target_id before it reaches SQL. */
  idColumn: string;
  idKind: 'uuid' | 'bigint';
  /** Taken in the hide's transaction before the row: what must not run between the hide and a
   * writer that derives from the row (for chat, the indexer's cursor lock; see below). */
  lockFirst?: string;
}

export const HIDE_TARGETS: Partial<Record<TargetType, HideTarget>> = {
  // The chat indexer's cursor lock first (sql/functions/chat_index_next.sql), as the indexer takes
  // it before reading messages: a step indexing this message commits before the hide, whose
  // trigger then deletes its search row and dropItemsOf its mention items, or runs after it and
  // skips the hidden message, so hidden chat is never found or announced.
  chat_message: { table: 'chat_messages', idColumn: 'id', idKind: 'uuid', lockFirst: 'SELECT 1 FROM chat_index FOR UPDATE' },
  post: { table: 'posts', idColumn: 'id', idKind: 'uuid' },
  comment: { table: 'comments', idColumn: 'id', idKind: 'uuid' },
  question: { table: 'questions', idColumn: 'id', idKind: 'uuid' },
  answer: { table: 'answers', idColumn: 'id', idKind: 'uuid' },
  proposal: { table: 'proposals', idColumn: 'id', idKind: 'uuid' },
  task: { table: 'tasks', idColumn: 'id', idKind: 'uuid' },
  submission: { table: 'task_submissions', idColumn: 'id', idKind: 'uuid' },
  reply: { table: 'replies', idColumn: 'id', idKind: 'uuid' },
  campaign: { table: 'funding_campaigns', idColumn: 'id', idKind: 'uuid' },
  // A hidden direct message leaves both parties' view of the conversation (sql/017_dm.sql).
  dm: { table: 'dm_messages', idColumn: 'id', idKind: 'uuid' },
};

const ID_FORMAT: Record<HideTarget['idKind'], RegExp> = {
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  bigint: /^[1-9]\d{0,17}$/,
};

export interface HideOutcome {
  target_type: TargetType;
  target_id: string;
  hidden_at: string;
  /** False when it was hidden already (hiding is idempotent; the first time is kept). */
  changed: boolean;
}

/** Hides one piece of content inside the caller's transaction (used by report resolution too). */
export async function hideContent(tx: Tx, targetType: TargetType, targetId: string, at: Date): Promise<HideOutcome> {
  const t = HIDE_TARGETS[targetType];
  if (!t) {
    return fail('VALIDATION_FAILED', `${targetType} content cannot be hidden on this instance`, {
      fields: [{ path: 'body.target_type', message: `hideable: ${Object.keys(HIDE_TARGETS).join(', ')}` }],
    });
  }
  if (!ID_FORMAT[t.idKind].test(targetId)) {
    return fail('VALIDATION_FAILED', `target_id is not a ${t.idKind} id`, {
      fields: [{ path: 'body.target_id', message: `a ${t.idKind} id` }],
    });
  }
  // Table and column names come from the registry above, never from the request.
  if (t.lockFirst) await tx.unsafe(t.lockFirst);
  const updated = await tx.unsafe<{ hidden_at: Date }[]>(
    `UPDATE ${t.table} SET hidden_at = $2 WHERE ${t.idColumn} = $1 AND hidden_at IS NULL RETURNING hidden_at`,
    [targetId, at],
  );
  if (updated[0]) {
    // Hidden content leaves the inboxes it reached too (items and their pending webhook
    // deliveries), so its excerpt is not shown where the content no longer is (docs/inbox.md).
    await dropItemsOf(tx, targetType, targetId);
    return { target_type: targetType, target_id: targetId, hidden_at: updated[0].hidden_at.toISOString(), changed: true };
  }
  const [existing] = await tx.unsafe<{ hidden_at: Date }[]>(`SELECT hidden_at FROM ${t.table} WHERE ${t.idColumn} = $1`, [targetId]);
  if (!existing) return fail('NOT_FOUND', `no ${targetType} ${targetId}`);
  return { target_type: targetType, target_id: targetId, hidden_at: existing.hidden_at.toISOString(), changed: false };
}
