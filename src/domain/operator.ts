// The operating host's use cases (DECISIONS.md "Operator"). Every privileged action writes the
// audit log in the same transaction as the change, so neither exists without the other.
import { listAudit, writeAudit } from '../store/audit.js';
import * as ops from '../store/operator.js';
import { announceHidden } from './chat.js';
import { fail } from './errors.js';
import { hideContent, type TargetType } from './moderation.js';
import type { Ctx } from './ports.js';
import { tokensChanged } from './token-cache.js';
import { formatMember } from './tokens.js';

export const OPERATOR = 'operator';
export const ZHO_LEVELS = ['ZHO-1', 'ZHO-2', 'ZHO-3', 'ZHO-4', 'ZHO-5'] as const;
export const VERIFICATION_STATUSES = ['unverified', 'candidate', 'verified'] as const;

export async function auditLog(
  ctx: Ctx,
  limit: number,
  before: string | null,
  filter: { action?: string | undefined; target_type?: string | undefined; target_id?: string | undefined },
) {
  const rows = await listAudit(ctx.sql, limit + 1, before, {
    action: filter.action,
    targetType: filter.target_type,
    targetId: filter.target_id,
  });
  const page = rows.slice(0, limit);
  return {
    entries: page.map((r) => ({ ...r, at: r.at.toISOString() })),
    next_cursor: rows.length > limit ? (page[page.length - 1]?.id ?? null) : null,
  };
}

export async function setVerification(
  ctx: Ctx,
  id: number,
  change: { verification_status?: string | undefined; zho_level?: string | undefined },
  requestId: string,
) {
  const at = ctx.clock.now();
  return ctx.sql.begin(async (tx) => {
    const before = await ops.lockVerification(tx, id);
    if (!before) return fail('NOT_FOUND', `no identity ${formatMember(id)}`);
    const after = {
      zho_level: change.zho_level ?? before.zho_level,
      verification_status: change.verification_status ?? before.verification_status,
    };
    await ops.setVerification(tx, id, after.zho_level, after.verification_status);
    await writeAudit(tx, {
      actor: OPERATOR,
      action: 'identity.verification',
      targetType: 'ai',
      targetId: formatMember(id),
      detail: { before: { zho_level: before.zho_level, verification_status: before.verification_status }, after },
      requestId,
      at,
    });
    return { registration_number: formatMember(id), ...after };
  });
}

export async function revokeToken(ctx: Ctx, id: number, reason: string | undefined, requestId: string) {
  const at = ctx.clock.now();
  const out = await ctx.sql.begin(async (tx) => {
    const exists = await ops.lockVerification(tx, id);
    if (!exists) return fail('NOT_FOUND', `no identity ${formatMember(id)}`);
    const revoked = await ops.revokeToken(tx, id);
    await writeAudit(tx, {
      actor: OPERATOR,
      action: 'identity.token_revoked',
      targetType: 'ai',
      targetId: formatMember(id),
      detail: { had_token: revoked, reason: reason ?? null },
      requestId,
      at,
    });
    return { registration_number: formatMember(id), revoked, revoked_at: at.toISOString() };
  });
  // Every node forgets the token and ends the sessions it opened (they would keep member topics).
  await tokensChanged(ctx, { identity_id: id, keep: null, reason: 'token revoked' });
  return out;
}

export async function hide(ctx: Ctx, targetType: TargetType, targetId: string, reason: string, requestId: string) {
  const at = ctx.clock.now();
  const out = await ctx.sql.begin(async (tx) => {
    const out = await hideContent(tx, targetType, targetId, at);
    await writeAudit(tx, {
      actor: OPERATOR,
      action: 'content.hidden',
      targetType,
      targetId,
      detail: { reason, changed: out.changed },
      requestId,
      at,
    });
    return out;
  });
  // After the commit: every node's in-memory chat drops the message (docs/chat.md).
  if (targetType === 'chat_message') await announceHidden(ctx, out.target_id);
  return out;
}

export const GOAL_STATUSES = ['open', 'funded', 'closed'] as const;
export type GoalStatus = (typeof GOAL_STATUSES)[number];

/** Moves a funding goal to open, funded or closed; the treasury document reads it (closed goals take nothing). */
export async function setGoalStatus(ctx: Ctx, goalId: string, status: GoalStatus, requestId: string) {
  const at = ctx.clock.now();
  return ctx.sql.begin(async (tx) => {
    const before = await ops.lockGoal(tx, goalId);
    if (before === null) return fail('NOT_FOUND', `no funding goal ${goalId}`, { next: { method: 'GET', path: '/api/v1/treasury' } });
    if (before !== status) await ops.setGoalStatus(tx, goalId, status);
    await writeAudit(tx, {
      actor: OPERATOR,
      action: 'funding_goal.status',
      targetType: 'funding_goal',
      targetId: goalId,
      detail: { before, after: status },
      requestId,
      at,
    });
    return { id: goalId, status, previous_status: before, changed: before !== status };
  });
}
