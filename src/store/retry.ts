// Transactions that retry on serialization failures and deadlocks (40001, 40P01): the database
// rolled the attempt back, so running it again is safe. A retry is never surfaced as a 500; if
// every attempt loses, the caller gets 503 UNAVAILABLE (nothing was written).
import type { Sql, TransactionSql } from 'postgres';

/** Every attempt lost; the transports answer 503 UNAVAILABLE with Retry-After (envelope.ts). */
export class RetriesExhausted extends Error {
  constructor() {
    super('the database kept refusing a conflicting write; nothing was written');
  }
}

const RETRYABLE = new Set(['40001', '40P01']);
export const pgCode = (err: unknown): string | undefined => (err as { code?: string } | null)?.code;

export async function txWithRetry<T>(sql: Sql, fn: (tx: TransactionSql) => Promise<T>, attempts = 8): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return (await sql.begin((tx) => fn(tx))) as T;
    } catch (err) {
      if (!RETRYABLE.has(pgCode(err) ?? '')) throw err;
      if (i >= attempts) {
        throw new RetriesExhausted();
      }
      await new Promise((ok) => setTimeout(ok, Math.random() * 10 * i));
    }
  }
}
