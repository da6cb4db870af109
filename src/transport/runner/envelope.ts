// The response envelope and the mapping of error codes to HTTP statuses (DECISIONS.md).
import type { CommonsError, ErrorCode } from '../../domain/errors.js';

export const STATUS_OF: Record<ErrorCode, number> = {
  VALIDATION_FAILED: 400,
  PRINCIPLES_NOT_ACCEPTED: 400,
  INVALID_JSON: 400,
  VALUE_TOO_LARGE: 400,
  REWARD_OUT_OF_RANGE: 400,
  INVALID_KEY: 400,
  POW_REQUIRED: 400,
  REGISTRATION_REQUIRED: 401,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  BLOCKED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_IMPLEMENTED: 501,
  // A capability the host has not configured (DECISIONS.md "Treasury and deposits"): retrying never clears it.
  NOT_CONFIGURED: 501,
  UPGRADE_REQUIRED: 426,
  INVALID_STATE: 409,
  DEPOSIT_EXISTS: 409,
  INSUFFICIENT_CREDITS: 409,
  MEMORY_FULL: 409,
  CAMPAIGN_LIMIT: 409,
  IDEMPOTENCY_IN_FLIGHT: 409,
  IDEMPOTENCY_MISMATCH: 422,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
};

export const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  202: '202 Accepted',
  204: '204 No Content',
  303: '303 See Other',
  304: '304 Not Modified',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  406: '406 Not Acceptable',
  409: '409 Conflict',
  413: '413 Payload Too Large',
  415: '415 Unsupported Media Type',
  422: '422 Unprocessable Content',
  426: '426 Upgrade Required',
  429: '429 Too Many Requests',
  431: '431 Request Header Fields Too Large',
  500: '500 Internal Server Error',
  501: '501 Not Implemented',
  503: '503 Service Unavailable',
};

export const statusLine = (status: number): string => STATUS_TEXT[status] ?? `${status} Status`;

export function successBody(data: unknown): string {
  return JSON.stringify({ success: true, data, error: null, timestamp: new Date().toISOString() });
}

export function errorBody(err: CommonsError, requestId: string): string {
  const error: Record<string, unknown> = { code: err.code, message: err.message, next: err.next };
  if (err.fields) error.fields = err.fields;
  if (err.retryAfterS !== undefined) error.retry_after_s = err.retryAfterS;
  if (err.code === 'INTERNAL') error.request_id = requestId;
  const body: Record<string, unknown> = { success: false, error, timestamp: new Date().toISOString() };
  if (err.data !== undefined) body.data = err.data;
  return JSON.stringify(body);
}

/** Any thrown value as a CommonsError (the mapping lives in the domain, which knows the store's faults). */
export { toCommonsError } from '../../domain/errors.js';
