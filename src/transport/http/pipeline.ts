// The request pipeline, independent of the socket library: route, parse, authenticate,
// validate, call the handler, write the envelope.

import { CommonsError } from '../../domain/errors.js';
import type { GuestIssuer } from '../../domain/guests.js';
import { BODY_MAX_BYTES } from '../../domain/limits.js';
import { countDbError } from '../../domain/metrics.js';
import type { Ctx } from '../../domain/ports.js';
import { uuid } from '../../domain/uuid.js';
import { clientAddress } from '../admission/client-ip.js';
import { credentialOf } from '../admission/credential.js';
import { MAX_DEPTH } from '../admission/decode.js';
import { classify } from '../admission/limits/policies.js';
import type { RateLimits } from '../admission/limits/rate-limits.js';
import { errorBody, STATUS_OF, successBody, toCommonsError } from '../runner/envelope.js';
import { type OperationOut, runOperation } from '../runner/operation.js';
import { EtagMemo, etagMatches, pageAnswer } from '../runner/pages.js';
import type { AnyRoute } from '../runner/route.js';
import type { Router } from '../runner/router.js';
import { withDeadline } from './deadline.js';
import type { PromMetrics } from './metrics.js';
import type { RawRequest, RawResponse } from './raw.js';

export const MAX_BODY_BYTES = BODY_MAX_BYTES;
export const MAX_JSON_DEPTH = MAX_DEPTH;

export type { RawRequest, RawResponse };

export const CORS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers':
    'X-Commons-Guest, X-Commons-Guest-Token, X-Request-Id, RateLimit, RateLimit-Policy, Retry-After, ETag, Idempotent-Replayed',
};

const JSON_TYPE = 'application/json; charset=utf-8';

export interface PipelineOptions {
  /** Absent when RATE_LIMITS=off. */
  limits?: RateLimits | undefined;
  metrics?: PromMetrics | undefined;
}

const KNOWN_METHODS = new Set(['GET', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PUT', 'PATCH']);

export function createPipeline(ctx: Ctx, router: Router, guests: GuestIssuer, opts: PipelineOptions = {}) {
  const inner = createHandler(ctx, router, guests, opts.limits);
  const metrics = opts.metrics;
  const deadline = (h: (raw: RawRequest) => Promise<RawResponse>) => withDeadline(h, ctx.config.requestDeadlineMs, ctx.health);
  if (!metrics) return deadline(async (raw: RawRequest): Promise<RawResponse> => (await inner(raw)).out);
  return deadline(async function handle(raw: RawRequest): Promise<RawResponse> {
    const started = process.hrtime.bigint();
    const { out, route } = await inner(raw);
    // Route patterns, never raw paths, keep the label set bounded.
    const method = KNOWN_METHODS.has(raw.method) ? raw.method : 'OTHER';
    metrics.observeRequest(method, route?.path ?? 'unmatched', out.status, Number(process.hrtime.bigint() - started) / 1e9);
    return out;
  });
}

function createHandler(ctx: Ctx, router: Router, guests: GuestIssuer, limits: RateLimits | undefined) {
  const etags = new EtagMemo();
  return async function handle(raw: RawRequest): Promise<{ out: RawResponse; route?: AnyRoute }> {
    const requestId = uuid();
    const headers: Record<string, string> = { ...CORS, 'x-request-id': requestId };
    if (raw.method === 'OPTIONS') {
      const out = {
        status: 204,
        headers: {
          ...headers,
          'access-control-allow-methods': 'GET, POST, PUT, DELETE, OPTIONS',
          'access-control-allow-headers': 'Authorization, Content-Type, X-Commons-Guest-Token, Accept, Idempotency-Key',
          'access-control-max-age': '86400',
        },
        body: '',
      };
      return { out };
    }
    let found: AnyRoute | undefined;
    // Rate-limit headers are written straight into the answer's headers.
    const op: OperationOut = { headers };
    raw.ip = clientAddress(ctx.config.trustProxy, raw.ip, raw.headers['x-forwarded-for']);
    // The request's one credential: read and digested here, once (src/transport/admission/credential.ts).
    const credential = raw.credential ?? credentialOf(raw.headers);
    try {
      // HEAD is GET without the body (RFC 9110 9.3.2); uws.ts leaves the body out.
      const m = router.match(raw.method === 'HEAD' ? 'GET' : raw.method, raw.path);
      found = m.kind === 'found' ? m.route : undefined;
      if (m.kind !== 'found') {
        // Unknown paths and methods count against the limits too (no free scanning; DECISIONS.md "Rate limits").
        if (limits) await limits.enforce(credential, raw.ip, classify(raw.method, undefined), headers);
        if (m.kind === 'none') throw new CommonsError('NOT_FOUND', `no route ${raw.method} ${raw.path}`);
        headers.allow = m.allow.join(', ');
        throw new CommonsError('METHOD_NOT_ALLOWED', `${raw.method} is not allowed on ${raw.path}; allowed: ${headers.allow}`);
      }
      const r = m.route;
      const call = {
        route: r,
        method: raw.method,
        path: raw.path,
        params: m.params,
        // Most writes carry no query: no URLSearchParams for them.
        query: raw.query === '' ? {} : Object.fromEntries(new URLSearchParams(raw.query)),
        body: { bytes: raw.body, contentType: raw.headers['content-type'] },
        headers: raw.headers,
        credential,
        ip: raw.ip,
        requestId,
      };
      const result = await runOperation({ ctx, guests, limits }, call, op);
      announce(headers, op);
      Object.assign(headers, result.headers);
      // The page changes with the next write: revalidated on every use (pages.ts).
      if ('page' in result) return { out: pageAnswer(result.page, raw.headers['if-none-match'], headers), route: r };
      if ('raw' in result) {
        const status = result.status ?? 200;
        // Documents: a strong ETag over their bytes, and 304 when the client has them.
        if (raw.method === 'GET' && status === 200 && !headers.etag) {
          headers.etag = etags.of(r.path, result.raw);
          if (etagMatches(raw.headers['if-none-match'], headers.etag)) return { out: { status: 304, headers, body: '' }, route: r };
        }
        headers['content-type'] = result.contentType;
        return { out: { status, headers, body: result.raw }, route: r };
      }
      if ('stream' in result) {
        headers['content-type'] = result.contentType;
        headers['cache-control'] ??= 'no-store';
        return { out: { status: result.status ?? 200, headers, body: '', stream: result.stream }, route: r };
      }
      headers['content-type'] = JSON_TYPE;
      headers['cache-control'] ??= 'no-store';
      return { out: { status: result.status ?? 200, headers, body: successBody(result.data) }, route: r };
    } catch (err) {
      announce(headers, op);
      const e = toCommonsError(err);
      const status = STATUS_OF[e.code];
      countDbError(ctx.metrics, err);
      // The log names the fault and the request id, never a stack trace or a credential (DECISIONS.md "Operator").
      // A capability the host has not configured is its choice, not a fault: info, once per request.
      if (e.code === 'NOT_CONFIGURED') ctx.log.info({ code: e.code, requestId, route: found?.path ?? null }, 'not configured');
      else if (status >= 500)
        ctx.log.error({ fault: faultOf(err), requestId, method: raw.method, route: found?.path ?? null }, 'request failed');
      if (e.retryAfterS !== undefined) headers['retry-after'] = String(e.retryAfterS);
      // RFC 9110 15.5.22: a 426 names the protocol to switch to.
      if (status === 426) headers.upgrade = 'websocket';
      headers['content-type'] = JSON_TYPE;
      headers['cache-control'] = 'no-store';
      return { out: { status, headers, body: errorBody(e, requestId) }, ...(found ? { route: found } : {}) };
    }
  };
}

/** A guest issued to this request is announced in its answer, also when the operation failed. */
export function announce(headers: Record<string, string>, op: Pick<OperationOut, 'issued'>): void {
  if (!op.issued) return;
  const pairs = guestHeaders(op.issued);
  for (let i = 0; i < pairs.length; i += 2) headers[pairs[i] as string] = pairs[i + 1] as string;
}

/** The headers announcing a guest, as name, value pairs (also written by the lean read path). */
export const guestHeaders = (g: { number: string; token: string }): string[] => [
  'x-commons-guest',
  g.number,
  'x-commons-guest-token',
  g.token,
];

function faultOf(err: unknown): { type: string; message: string; code?: string } {
  const e = err as { name?: unknown; message?: unknown; code?: unknown } | null;
  const out: { type: string; message: string; code?: string } = {
    type: typeof e?.name === 'string' ? e.name : typeof err,
    message: typeof e?.message === 'string' ? e.message.slice(0, 500) : String(err).slice(0, 500),
  };
  if (typeof e?.code === 'string') out.code = e.code;
  return out;
}
