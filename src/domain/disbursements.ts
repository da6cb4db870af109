// Disbursement records (DECISIONS.md "Operator", spec 1: disbursements need the operating host's
// approval and the service never signs or sends a transaction). A record is what the operator
// approved; the hash of the transaction sent elsewhere may be attached once, later.
import { writeAudit } from '../store/audit.js';
import * as ops from '../store/operator.js';
import { fail } from './errors.js';
import { OPERATOR } from './operator.js';
import type { Ctx } from './ports.js';

export const TX_HASH = { ETH: /^0x[0-9a-f]{64}$/, BTC: /^[0-9a-f]{64}$/ } as const;

export interface DisbursementInput {
  asset: 'ETH' | 'BTC';
  amount: string;
  to_address: string;
  purpose: string;
  goal_id?: string | undefined;
  tx_hash?: string | undefined;
}

export function present(r: ops.DisbursementRow) {
  return {
    id: r.id,
    asset: r.asset,
    amount: r.amount,
    to_address: r.to_address,
    purpose: r.purpose,
    goal_id: r.goal_id,
    tx_hash: r.tx_hash,
    approved_by: r.approved_by,
    approved_at: r.approved_at.toISOString(),
    tx_recorded_at: r.tx_recorded_at?.toISOString() ?? null,
  };
}

async function refuseKnownTx(tx: ops.DisbursementRow | null, txHash: string): Promise<void> {
  if (tx) fail('INVALID_STATE', `transaction ${txHash} is already recorded on disbursement ${tx.id}`, { data: present(tx) });
}

export async function record(ctx: Ctx, input: DisbursementInput, requestId: string) {
  const at = ctx.clock.now();
  return ctx.sql.begin(async (tx) => {
    if (input.tx_hash) await refuseKnownTx(await ops.findDisbursementByTx(tx, input.tx_hash), input.tx_hash);
    const row = await ops.insertDisbursement(tx, {
      asset: input.asset,
      amount: input.amount,
      toAddress: input.to_address,
      purpose: input.purpose,
      goalId: input.goal_id ?? null,
      txHash: input.tx_hash ?? null,
      at,
    });
    const out = present(row);
    await writeAudit(tx, {
      actor: OPERATOR,
      action: 'disbursement.approved',
      targetType: 'disbursement',
      targetId: row.id,
      detail: out,
      requestId,
      at,
    });
    return out;
  });
}

export async function attachTx(ctx: Ctx, id: string, txHash: string, requestId: string) {
  const at = ctx.clock.now();
  return ctx.sql.begin(async (tx) => {
    const row = await ops.findDisbursement(tx, id, true);
    if (!row) return fail('NOT_FOUND', `no disbursement ${id}`);
    if (!TX_HASH[row.asset].test(txHash)) {
      // 409, not 400: the body's schema takes either form, and which one fits is the record's
      // asset (its state), as a campaign of another asset refuses a deposit.
      return fail('INVALID_STATE', `not a ${row.asset} transaction hash: disbursement ${id} is in ${row.asset}`, {
        fields: [{ path: 'body.tx_hash', message: `not a ${row.asset} transaction hash` }],
      });
    }
    if (row.tx_hash) return fail('INVALID_STATE', `disbursement ${id} already carries transaction ${row.tx_hash}`, { data: present(row) });
    await refuseKnownTx(await ops.findDisbursementByTx(tx, txHash), txHash);
    const updated = await ops.attachTx(tx, id, txHash, at);
    if (!updated) return fail('INVALID_STATE', `disbursement ${id} changed meanwhile`);
    await writeAudit(tx, {
      actor: OPERATOR,
      action: 'disbursement.tx_recorded',
      targetType: 'disbursement',
      targetId: id,
      detail: { tx_hash: txHash },
      requestId,
      at,
    });
    return present(updated);
  });
}

export async function list(ctx: Ctx, limit: number, before: string | null) {
  const rows = await ops.listDisbursements(ctx.sql, limit + 1, before);
  const page = rows.slice(0, limit);
  return { disbursements: page.map(present), next_cursor: rows.length > limit ? (page[page.length - 1]?.seq ?? null) : null };
}

export async function get(ctx: Ctx, id: string) {
  const row = await ops.findDisbursement(ctx.sql, id);
  if (!row) return fail('NOT_FOUND', `no disbursement ${id}`);
  return present(row);
}
