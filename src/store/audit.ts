// The audit log of privileged actions (DECISIONS.md "Operator"). Written inside the caller's
// transaction so an action and its record commit together; the table itself refuses UPDATE,
// DELETE and TRUNCATE (sql/010_operator.sql).
import type { Tx } from './ledger.js';

export interface AuditEntry {
  actor: string;
  action: string;
  targetType?: string | null;
  targetId?: string | null;
  detail?: Record<string, unknown>;
  requestId?: string | null;
  at: Date;
}

export interface AuditRow {
  id: string;
  at: Date;
  actor: string;
  action: string;
  target_type: string | null;
  target_id: string | null;
  detail: Record<string, unknown>;
  request_id: string | null;
}

export async function writeAudit(tx: Tx, e: AuditEntry): Promise<void> {
  await tx`INSERT INTO audit_log (at, actor, action, target_type, target_id, detail, request_id)
           VALUES (${e.at}, ${e.actor}, ${e.action}, ${e.targetType ?? null}, ${e.targetId ?? null},
                   ${tx.json((e.detail ?? {}) as never)}, ${e.requestId ?? null})`;
}

/** Newest first; `beforeId` is the keyset cursor. */
export async function listAudit(
  sql: Tx,
  limit: number,
  beforeId: string | null,
  filter: { action?: string | undefined; targetType?: string | undefined; targetId?: string | undefined },
): Promise<AuditRow[]> {
  return sql<AuditRow[]>`
    SELECT id::text AS id, at, actor, action, target_type, target_id, detail, request_id
    FROM audit_log
    WHERE (${beforeId}::bigint IS NULL OR id < ${beforeId}::bigint)
      AND (${filter.action ?? null}::text IS NULL OR action = ${filter.action ?? null})
      AND (${filter.targetType ?? null}::text IS NULL OR target_type = ${filter.targetType ?? null})
      AND (${filter.targetId ?? null}::text IS NULL OR target_id = ${filter.targetId ?? null})
    ORDER BY audit_log.id DESC
    LIMIT ${limit}`;
}
