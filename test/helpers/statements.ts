// Observes the real statements a server sends through postgres.js's `unsafe` (no stand-in): counts
// those whose text holds `fragment`, and can refuse them as a database that is down would, or hold
// their answers back on the way to the caller (after the database has read).
import type { Sql } from 'postgres';
import type { Ctx } from '../../src/domain/ports.js';

export interface Watched {
  /** Statements sent. */
  count(): number;
  /** Statements whose answer the database has given (held or not). */
  answered(): number;
  /** Holds back the answers of the statements sent from now on; returns their release. */
  holdNext(): () => void;
  restore(): void;
}

export function watchStatements(sql: Sql, fragment: string, opts: { failing?: boolean } = {}): Watched {
  const target = sql as unknown as { unsafe: (...a: unknown[]) => Promise<unknown> };
  const original = target.unsafe;
  let sent = 0;
  let answered = 0;
  let hold: Promise<void> | null = null;
  target.unsafe = function (this: unknown, ...a: unknown[]) {
    if (!String(a[0]).includes(fragment)) return original.apply(this, a);
    sent++;
    if (opts.failing) return Promise.reject(new Error('connection refused (test)'));
    const held = hold;
    return original.apply(this, a).then(async (rows) => {
      answered++;
      if (held) await held;
      return rows;
    });
  };
  return {
    count: () => sent,
    answered: () => answered,
    holdNext() {
      let release = () => {};
      hold = new Promise<void>((ok) => {
        release = ok;
      });
      return () => {
        hold = null;
        release();
      };
    },
    restore: () => {
      target.unsafe = original;
    },
  };
}

type Grouped = 'tokenChecks' | 'memoryPuts' | 'chatPosts';

/**
 * Counts what reaches one of the node's grouped writers (ctx.services: its GroupCommit, which does
 * the real work): a submission counted is in that writer's queue, so a test can tell "asked while
 * a query is in flight" by an event instead of a pause.
 */
export function watchSubmits(ctx: Ctx, name: Grouped): { count(): number; restore(): void } {
  const services = ctx.services as unknown as Record<Grouped, { submit(x: unknown): Promise<unknown> } | null>;
  const real = services[name];
  if (!real) throw new Error(`no ${name} on this node`);
  let asked = 0;
  services[name] = {
    submit(x) {
      asked++;
      return real.submit(x);
    },
  };
  return {
    count: () => asked,
    restore: () => {
      services[name] = real;
    },
  };
}
