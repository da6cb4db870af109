// A transaction without its own round trips for BEGIN and COMMIT: on a reserved connection, BEGIN
// goes out with the transaction's first statement and COMMIT with its last (postgres.js sends the
// statements of one connection in order, each after the one before without waiting for its
// answer). `sql.begin` waits for BEGIN's answer before the first statement and for the last
// statement's answer before COMMIT: two round trips more, which a group of writes committed one
// group at a time (src/domain/task-commit.ts) pays on its critical path.
//
// Every statement must be sent in the order meant, so the body sends them itself (`send`: the
// query goes out now, in call order) rather than through an async helper whose await would send
// it a turn later. A statement that fails aborts the transaction: those sent after it fail too
// (25P02) and the COMMIT sent after them ends it as a rollback; the first failure is thrown.
// Serialization failures and deadlocks (40001, 40P01) run the whole body again, as txWithRetry does.
import type { PendingQuery, Row, Sql } from 'postgres';
import { pgCode, RetriesExhausted } from './retry.js';

const RETRYABLE = new Set(['40001', '40P01']);

export interface PipelinedTx {
  /** Sends a statement of the transaction now (after every one sent before it). */
  send<T extends readonly Row[]>(q: PendingQuery<T>): Promise<T>;
  /** The reserved connection, for building statements (send them with `send`). */
  sql: Sql;
  /** Sends COMMIT now; resolves once committed, rejects if the transaction failed. */
  commit(): Promise<void>;
}

export async function pipelinedTx<T>(pool: Sql, fn: (tx: PipelinedTx) => Promise<T>, attempts = 8): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await once(pool, fn);
    } catch (err) {
      if (!RETRYABLE.has(pgCode(err) ?? '')) throw err;
      if (i >= attempts) throw new RetriesExhausted();
      await new Promise((ok) => setTimeout(ok, Math.random() * 10 * i));
    }
  }
}

async function once<T>(pool: Sql, fn: (tx: PipelinedTx) => Promise<T>): Promise<T> {
  const c = await pool.reserve();
  let committed: Promise<void> | null = null;
  const sent: Promise<unknown>[] = [];
  const send = <R extends readonly Row[]>(q: PendingQuery<R>): Promise<R> => {
    const p = q.execute() as unknown as Promise<R>;
    // Its failure is the body's to see; this only keeps an unawaited one from going unhandled.
    sent.push(p.then(undefined, () => {}));
    return p;
  };
  send(c.unsafe('BEGIN'));
  const commit = (): Promise<void> => {
    committed ??= (async () => {
      const q = send(c.unsafe('COMMIT'));
      const [r] = await Promise.all([q, ...sent.slice(0, -1)]);
      // COMMIT ends a transaction a statement aborted as a rollback, without an error of its own.
      if ((r as unknown as { command?: string }).command !== 'COMMIT') throw new Error('the transaction was rolled back');
    })();
    return committed;
  };
  try {
    const out = await fn({ send, sql: c, commit });
    await commit();
    return out;
  } catch (err) {
    // The connection goes back clean: a transaction still open (a failure before COMMIT was sent) is rolled back.
    if (!committed) await c.unsafe('ROLLBACK').catch(() => {});
    else await Promise.allSettled(sent);
    throw err;
  } finally {
    c.release();
  }
}
