// The uWS answer and request helpers every edge shares (the HTTP pipeline, the tool protocols'
// web endpoints, the stream's and the relay's upgrades): the in-flight count, the body reader with
// its cap, the status line with the headers every answer carries, and a refused upgrade.
import type { HttpResponse } from 'uWebSockets.js';
import { CommonsError } from '../../domain/errors.js';
import { BODY_MAX_BYTES as MAX_BODY_BYTES } from '../../domain/limits.js';
import { errorBody, STATUS_OF, statusLine } from '../runner/envelope.js';
import type { AnswerHead } from './head.js';

export interface InFlight {
  count: number;
  drained: (() => void) | null;
  /** Set at shutdown: new requests on open connections get 503 and every answer closes its
   * connection, so draining ends (DECISIONS.md "Reliability promises"). */
  stopping?: boolean;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface ReqState {
  aborted: boolean;
  done: boolean;
}

/**
 * Streams a request body with the 64 KiB cap (also used by web.ts): `onBody` gets the whole body
 * (null for methods without one), or `onTooLarge` is called once, while reading.
 */
export function readBody(
  res: HttpResponse,
  method: string,
  headers: Record<string, string>,
  state: ReqState,
  onBody: (body: Buffer | null) => void,
  onTooLarge: () => void,
): void {
  if (!BODY_METHODS.has(method)) {
    onBody(null);
    return;
  }
  if (Number(headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
    onTooLarge();
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  res.onData((chunk, isLast) => {
    if (state.done || refused) return;
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) {
      refused = true;
      onTooLarge();
      return;
    }
    // uWS reuses the chunk's memory after this callback returns: copy it (Buffer.from copies a
    // typed array's bytes, into node's pool when small), once; a body in one chunk is that copy.
    const copy = Buffer.from(new Uint8Array(chunk));
    if (isLast && chunks.length === 0) return onBody(copy);
    chunks.push(copy);
    if (isLast) onBody(Buffer.concat(chunks));
  });
}

export function finish(inflight: InFlight, state: { done: boolean }): void {
  if (state.done) return;
  state.done = true;
  inflight.count--;
  if (inflight.count === 0 && inflight.drained) inflight.drained();
}

/** Writes the status line and the headers every answer carries; returns `res` for more headers. */
export function writeHead(res: HttpResponse, status: number, head: AnswerHead): HttpResponse {
  res.writeStatus(statusLine(status));
  for (let i = 0; i < head.length; i += 2) res.writeHeader(head[i] as string, head[i + 1] as string);
  return res;
}

/** A WebSocket upgrade refused for its Origin (the stream and the relay): 403 FORBIDDEN, before
 * any upgrade, credential lookup or per-address count. */
export function refuseOrigin(res: HttpResponse, head: AnswerHead, origin: string | undefined): void {
  const err = new CommonsError('FORBIDDEN', `Origin ${String(origin).slice(0, 200)} may not open this endpoint (STREAM_ALLOWED_ORIGINS)`);
  res.cork(() => {
    writeHead(res, STATUS_OF.FORBIDDEN, head).writeHeader('content-type', 'application/json; charset=utf-8');
    res.end(errorBody(err, ''));
  });
}
