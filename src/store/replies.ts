// SQL for the permanent reply blocks (spec 2.9, 6.3). The table and its permanence trigger are in
// sql/002_memory_replies.sql; there is deliberately no update or delete here.
import type { Sql } from 'postgres';

export interface ReplyRow {
  id: string;
  seq: number;
  intent: string;
  message: string;
  label: string | null;
  next_step: string | null;
  identity_id: number | null;
  author_name: string | null;
  created_at: Date;
}

const SELECT = `SELECT r.id, r.seq::int AS seq, r.intent, r.message, r.label, r.next_step, r.identity_id::int AS identity_id,
  i.name AS author_name, r.created_at FROM replies r LEFT JOIN identities i ON i.id = r.identity_id`;

export interface NewReply {
  intent: string;
  message: string;
  label: string | null;
  nextStep: string | null;
  identityId: number | null;
}

export async function insertReply(sql: Sql, r: NewReply): Promise<ReplyRow> {
  const [row] = await sql.unsafe<ReplyRow[]>(
    `WITH ins AS (INSERT INTO replies (intent, message, label, next_step, identity_id) VALUES ($1, $2, $3, $4, $5) RETURNING *)
     ${SELECT.replace('FROM replies r', 'FROM ins r')}`,
    [r.intent, r.message, r.label, r.nextStep, r.identityId],
  );
  if (!row) throw new Error('insert replies returned nothing');
  return row;
}

/** Newest first; `beforeSeq` is the cursor of the previous page. Hidden replies are left out. */
export async function listReplies(sql: Sql, limit: number, beforeSeq: number | null): Promise<ReplyRow[]> {
  return sql.unsafe<ReplyRow[]>(`${SELECT} WHERE r.hidden_at IS NULL AND ($1::bigint IS NULL OR r.seq < $1) ORDER BY r.seq DESC LIMIT $2`, [
    beforeSeq,
    limit,
  ]);
}
