// The double-entry credit ledger (DECISIONS.md "Tasks (credits)"). Each movement is one row in
// ledger_transfers plus the two balance updates, inside the caller's transaction. The
// balance_not_negative constraint makes an overdraft fail in the database itself.
import type { Sql, TransactionSql } from 'postgres';

export type Tx = TransactionSql | Sql;

export const JOINING_GRANT = 1000;
export const identityAccount = (id: number): string => `ai:${id}`;
export const escrowAccount = (ref: string): string => `escrow:${ref}`;

export async function openAccount(tx: Tx, id: string, kind: 'identity' | 'escrow', identityId: number | null): Promise<void> {
  await tx`INSERT INTO ledger_accounts (id, kind, identity_id) VALUES (${id}, ${kind}, ${identityId})
           ON CONFLICT (id) DO NOTHING`;
}

/** Moves `amount` credits; throws the database's check violation (23514) on an overdraft. */
export async function transfer(tx: Tx, from: string, to: string, amount: number, kind: string, ref: string | null): Promise<void> {
  await tx`UPDATE ledger_accounts SET balance = balance - ${amount} WHERE id = ${from}`;
  await tx`UPDATE ledger_accounts SET balance = balance + ${amount} WHERE id = ${to}`;
  await tx`INSERT INTO ledger_transfers (from_account, to_account, amount, kind, ref)
           VALUES (${from}, ${to}, ${amount}, ${kind}, ${ref})`;
}

export async function balanceOf(tx: Tx, account: string): Promise<number> {
  const [row] = await tx<{ balance: string }[]>`SELECT balance FROM ledger_accounts WHERE id = ${account}`;
  return row ? Number(row.balance) : 0;
}

/** Credits held in escrow on behalf of an identity (open tasks it posted). */
export async function escrowedBy(tx: Tx, identityId: number): Promise<number> {
  const [row] = await tx<{ total: string | null }[]>`
    SELECT sum(balance) AS total FROM ledger_accounts WHERE kind = 'escrow' AND identity_id = ${identityId}`;
  return Number(row?.total ?? 0);
}
