// A keyed write's statements all go through its own transaction (src/domain/idempotency.ts). The
// embedded store is one connection (./db.ts): while that transaction holds it, a statement sent on
// the store's own `sql` waits for the connection the transaction holds, and the transaction waits
// for the statement, so the node stops answering for good (issue 44: one keyed stream heartbeat
// did this). On PostgreSQL the same statement would run outside the transaction, so a rolled-back
// write would keep it. Either way it is a bug: inside a keyed write's transaction such a statement
// fails at once (the write answers 500 and keeps nothing) instead.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Sql } from 'postgres';

const holding = new AsyncLocalStorage<{ open: boolean }>();

/** Runs `fn` (a transaction's body) as holding the store's connection until it settles. */
export async function holdingConnection<T>(fn: () => Promise<T>): Promise<T> {
  const mark = { open: true };
  try {
    return await holding.run(mark, fn);
  } finally {
    mark.open = false;
  }
}

function refuseInside(): void {
  if (holding.getStore()?.open !== true) return;
  throw new Error("a statement on the store's own connection inside a keyed write's transaction: use the context the write runs with");
}

const isTemplate = (a: unknown): boolean => Array.isArray(a) && 'raw' in a;

/** The store's `sql`, refusing statements sent on it from inside a keyed write (see the header). */
export function guardOneConnection(sql: Sql): Sql {
  return new Proxy(sql, {
    apply(target, self, args: unknown[]) {
      // sql(values) builds a fragment for a statement of the transaction; only sql`...` runs one.
      if (isTemplate(args[0])) refuseInside();
      return Reflect.apply(target as unknown as (...a: unknown[]) => unknown, self, args);
    },
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if ((prop === 'begin' || prop === 'unsafe' || prop === 'reserve') && typeof v === 'function') {
        return (...args: unknown[]) => {
          refuseInside();
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return v;
    },
  });
}
