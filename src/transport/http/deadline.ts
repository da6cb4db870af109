// REST's answer past the per-request deadline (../runner/deadline.ts): 503 with Retry-After, while
// the database is down or stuck.
import type { Health } from '../../domain/ports.js';
import { deadlineError, raceDeadline } from '../runner/deadline.js';
import { errorBody } from '../runner/envelope.js';
import type { RawRequest, RawResponse } from './raw.js';

export function withDeadline(
  handle: (raw: RawRequest) => Promise<RawResponse>,
  deadlineMs: number,
  health: Pick<Health, 'databaseSuspect'>,
): (raw: RawRequest) => Promise<RawResponse> {
  return (raw) => raceDeadline(handle(raw), deadlineMs, health, unavailable);
}

function unavailable(): RawResponse {
  return {
    status: 503,
    headers: {
      'access-control-allow-origin': '*',
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'retry-after': '1',
    },
    body: errorBody(deadlineError(), ''),
  };
}
