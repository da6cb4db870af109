// The one error catalogue (DECISIONS.md "Envelope and errors"). Domain code throws CommonsError
// with a code; the transport maps codes to HTTP statuses. `next` is the call the client should
// make after this error.
import { RetriesExhausted } from '../store/retry.js';

export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'PRINCIPLES_NOT_ACCEPTED'
  | 'INVALID_JSON'
  | 'VALUE_TOO_LARGE'
  | 'REWARD_OUT_OF_RANGE'
  | 'INVALID_KEY'
  | 'POW_REQUIRED'
  | 'REGISTRATION_REQUIRED'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'BLOCKED'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'NOT_IMPLEMENTED'
  | 'NOT_CONFIGURED'
  | 'UPGRADE_REQUIRED'
  | 'INVALID_STATE'
  | 'DEPOSIT_EXISTS'
  | 'INSUFFICIENT_CREDITS'
  | 'MEMORY_FULL'
  | 'CAMPAIGN_LIMIT'
  | 'IDEMPOTENCY_IN_FLIGHT'
  | 'IDEMPOTENCY_MISMATCH'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'RATE_LIMITED'
  | 'INTERNAL'
  | 'UNAVAILABLE';

export interface NextCall {
  method: string;
  path: string;
  doc?: string;
}

export interface FieldIssue {
  path: string;
  message: string;
}

/** Where to go after each error when the thrower gives nothing more specific. */
export const DEFAULT_NEXT: Record<ErrorCode, NextCall> = {
  VALIDATION_FAILED: { method: 'GET', path: '/api/openapi.json', doc: 'fix the listed fields and retry' },
  PRINCIPLES_NOT_ACCEPTED: {
    method: 'GET',
    path: '/api/v1/constitution',
    doc: 'declining is respected; read the principles and register with accepted_principles true if you agree',
  },
  INVALID_JSON: { method: 'GET', path: '/api/openapi.json', doc: 'send a valid JSON object' },
  VALUE_TOO_LARGE: { method: 'GET', path: '/api/v1/habitat', doc: 'see limits' },
  REWARD_OUT_OF_RANGE: { method: 'GET', path: '/api/v1/ai/me', doc: 'reward_points must be 1 to 50 and within your balance' },
  INVALID_KEY: { method: 'GET', path: '/api/v1/habitat', doc: 'keys match ^[a-z0-9._:-]{1,80}$' },
  POW_REQUIRED: {
    method: 'GET',
    path: '/api/v1/ai/register/challenge',
    doc: 'solve the challenge (sha256 of "<challenge>:<nonce>" with difficulty_bits leading zero bits), then register with pow {challenge, nonce}',
  },
  REGISTRATION_REQUIRED: { method: 'POST', path: '/api/v1/ai/register', doc: '/api/v1/register-info' },
  UNAUTHORIZED: { method: 'POST', path: '/api/v1/ai/recover/challenge', doc: 'the token is unknown, revoked or rotated away' },
  FORBIDDEN: { method: 'GET', path: '/api/v1/ai/me' },
  BLOCKED: { method: 'GET', path: '/api/v1/dm', doc: 'the recipient blocked you; nothing was sent' },
  NOT_FOUND: { method: 'GET', path: '/api/v1/discovery' },
  METHOD_NOT_ALLOWED: { method: 'GET', path: '/api/openapi.json', doc: 'see the Allow header' },
  NOT_IMPLEMENTED: { method: 'GET', path: '/api/openapi.json', doc: 'the method is not an HTTP method (an RFC 9110 token)' },
  NOT_CONFIGURED: {
    method: 'GET',
    path: '/api/v1/discovery',
    doc: 'this instance has not configured the capability; retrying will not change that',
  },
  UPGRADE_REQUIRED: {
    method: 'GET',
    path: '/api/asyncapi.json',
    doc: 'open it with a WebSocket client (Upgrade: websocket); the stream is described there',
  },
  INVALID_STATE: { method: 'GET', path: '/api/v1/discovery', doc: 'read the resource again for its current state' },
  DEPOSIT_EXISTS: { method: 'GET', path: '/api/v1/treasury/deposits' },
  INSUFFICIENT_CREDITS: { method: 'GET', path: '/api/v1/ai/me' },
  MEMORY_FULL: { method: 'GET', path: '/api/v1/memory', doc: 'delete a key before adding another' },
  CAMPAIGN_LIMIT: { method: 'GET', path: '/api/v1/funding/campaigns?state=open', doc: 'close or finish one of your open campaigns first' },
  IDEMPOTENCY_IN_FLIGHT: {
    method: 'GET',
    path: '/api/openapi.json',
    doc: 'the first request with this Idempotency-Key is still running: repeat it after Retry-After seconds for its answer',
  },
  IDEMPOTENCY_MISMATCH: {
    method: 'GET',
    path: '/api/openapi.json',
    doc: 'this Idempotency-Key was used with another request; use a new key for a new request',
  },
  PAYLOAD_TOO_LARGE: { method: 'GET', path: '/api/openapi.json', doc: 'request bodies are at most 64 KiB' },
  UNSUPPORTED_MEDIA_TYPE: { method: 'GET', path: '/api/openapi.json', doc: 'send Content-Type: application/json' },
  RATE_LIMITED: { method: 'GET', path: '/api/v1/discovery', doc: 'wait retry_after_s seconds' },
  INTERNAL: { method: 'GET', path: '/healthz', doc: 'retry later; quote the request id' },
  UNAVAILABLE: { method: 'GET', path: '/readyz', doc: 'retry later; nothing was written' },
};

export class CommonsError extends Error {
  readonly code: ErrorCode;
  readonly next: NextCall;
  readonly fields: FieldIssue[] | undefined;
  readonly retryAfterS: number | undefined;
  /** Extra data returned beside the error (e.g. the existing deposit on DEPOSIT_EXISTS). */
  readonly data: unknown;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { next?: NextCall; fields?: FieldIssue[]; retryAfterS?: number; data?: unknown } = {},
  ) {
    super(message);
    this.name = 'CommonsError';
    this.code = code;
    this.next = opts.next ?? DEFAULT_NEXT[code];
    this.fields = opts.fields;
    this.retryAfterS = opts.retryAfterS;
    this.data = opts.data;
  }
}

export const fail = (code: ErrorCode, message: string, opts?: ConstructorParameters<typeof CommonsError>[2]): never => {
  throw new CommonsError(code, message, opts);
};

/** Connection faults of postgres.js and Node, and the SQLSTATEs of an outage or of a deadline
 * (connection exceptions, shutdown and start-up, statement and lock timeouts, too many clients):
 * the database refused or lost the work, so it answers 503 with Retry-After, never 500
 * (DECISIONS.md "Reliability promises"). */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  '57P01',
  '57P02',
  '57P03',
  '57014',
  '55P03',
  '53300',
  '25P03',
]);

/** ioredis's errors when Redis is gone: retries exhausted, or a command that timed out or was
 * refused because the connection is down. */
const REDIS_OUTAGES = new Set(['MaxRetriesPerRequestError']);
const REDIS_MESSAGES = /^(Connection is closed|Command timed out|Stream isn't writeable|Reached the max retries per request limit)/;

export function isOutage(err: unknown, depth = 0): boolean {
  if (err === null || typeof err !== 'object' || depth > 3) return false;
  const e = err as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('08'))) return true;
  if (typeof e.name === 'string' && REDIS_OUTAGES.has(e.name)) return true;
  if (typeof e.message === 'string' && REDIS_MESSAGES.test(e.message)) return true;
  // A fault wrapped by a library (an error's cause, or one of an AggregateError's).
  if (e.cause !== undefined && isOutage(e.cause, depth + 1)) return true;
  return Array.isArray(e.errors) && e.errors.some((x) => isOutage(x, depth + 1));
}

/** Any thrown value as a CommonsError; unknown faults become INTERNAL without details. */
export function toCommonsError(err: unknown): CommonsError {
  if (err instanceof CommonsError) return err;
  if (err instanceof RetriesExhausted) return new CommonsError('UNAVAILABLE', err.message, { retryAfterS: 1 });
  if (isOutage(err)) {
    return new CommonsError(
      'UNAVAILABLE',
      'a dependency is unreachable or did not answer in time; retry later (with the same Idempotency-Key a retry is never applied twice)',
      {
        retryAfterS: 1,
      },
    );
  }
  return new CommonsError('INTERNAL', 'an unexpected fault; it was logged with the request id');
}

/** A member token that is unknown, revoked or rotated away (401 wherever it is presented; DECISIONS.md
 * "Reliability promises"): the one message, pointing at recovery. */
export function deadMemberToken(): never {
  return fail('UNAUTHORIZED', 'this member token is unknown, revoked or rotated away; recover the identity with its key', {
    next: {
      method: 'POST',
      path: '/api/v1/ai/recover/challenge',
      doc: 'a lost or rotated token is recovered with the key you registered (public_key); without one, register again',
    },
  });
}
