// The per-request deadline (DECISIONS.md "Reliability promises"): a request still waiting when the
// deadline passes, while the database is known to be down or stuck, is answered 503 with
// Retry-After at once instead of hanging. A request that is merely slow on a healthy database goes
// on (the statement and lock timeouts bound it), so load alone never turns into 503s. The same
// race serves every way in: REST (src/transport/http/deadline.ts), the tool protocols (MCP tools,
// A2A skills: actions.ts), the stream's upgrade and its ops (src/transport/ws), each answering in
// its own error shape.
import { CommonsError } from '../../domain/errors.js';
import type { Ctx, Health } from '../../domain/ports.js';

const RECHECK_MS = 100;

/** The error a request past its deadline gets while the database is down or stuck. */
export function deadlineError(): CommonsError {
  return new CommonsError('UNAVAILABLE', 'the database did not answer in time; the request may not have been applied, retry later', {
    retryAfterS: 1,
  });
}

/** `work`'s outcome, or `late()` once the deadline has passed while the database is suspect. */
export function raceDeadline<T>(work: Promise<T>, deadlineMs: number, health: Pick<Health, 'databaseSuspect'>, late: () => T): Promise<T> {
  return new Promise<T>((ok, ko) => {
    let timer: NodeJS.Timeout | null = null;
    let settled = false;
    const settle = (out: T) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      ok(out);
    };
    const watch = (ms: number) => {
      timer = setTimeout(() => {
        if (health.databaseSuspect()) settle(late());
        else watch(RECHECK_MS);
      }, ms);
    };
    watch(deadlineMs);
    work.then(settle, (err: unknown) => {
      if (timer) clearTimeout(timer);
      if (!settled) {
        settled = true;
        ko(err);
      }
    });
  });
}

/** Every way in answers within the per-request deadline the same way (DECISIONS.md "Reliability
 * promises"): `work`'s outcome, or `late()` once REQUEST_DEADLINE_MS has passed while the database
 * is down or stuck. Each transport writes the late answer in its own shape. */
export function withinDeadline<T>(ctx: Pick<Ctx, 'config' | 'health'>, work: Promise<T>, late: () => T): Promise<T> {
  return raceDeadline(work, ctx.config.requestDeadlineMs, ctx.health, late);
}
