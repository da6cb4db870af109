// The per-request deadline (DECISIONS.md "Reliability promises"): a request still waiting when the
// deadline passes, while the database is known to be down or stuck, is answered 503 with
// Retry-After at once instead of hanging. A request that is merely slow on a healthy database goes
// on (the statement and lock timeouts bound it), so load alone never turns into 503s.
import { CommonsError } from '../../domain/errors.js';
import type { Health } from '../../domain/ports.js';
import { errorBody } from './envelope.js';
import type { RawRequest, RawResponse } from './pipeline.js';

const RECHECK_MS = 100;

export function withDeadline(
  handle: (raw: RawRequest) => Promise<RawResponse>,
  deadlineMs: number,
  health: Pick<Health, 'databaseSuspect'>,
): (raw: RawRequest) => Promise<RawResponse> {
  return (raw) =>
    new Promise<RawResponse>((ok, ko) => {
      let timer: NodeJS.Timeout | null = null;
      let settled = false;
      const settle = (out: RawResponse) => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        ok(out);
      };
      const watch = (ms: number) => {
        timer = setTimeout(() => {
          if (health.databaseSuspect()) settle(unavailable());
          else watch(RECHECK_MS);
        }, ms);
      };
      watch(deadlineMs);
      handle(raw).then(settle, (err: unknown) => {
        if (timer) clearTimeout(timer);
        if (!settled) ko(err);
      });
    });
}

function unavailable(): RawResponse {
  const err = new CommonsError('UNAVAILABLE', 'the database did not answer in time; the request may not have been applied, retry later', {
    retryAfterS: 1,
  });
  return {
    status: 503,
    headers: {
      'access-control-allow-origin': '*',
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'retry-after': '1',
    },
    body: errorBody(err, ''),
  };
}
