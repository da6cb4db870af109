// The only code that touches uWS HTTP types (STYLE.md 1): read the request synchronously, set an
// abort flag, stream the body with a 64 KiB cap (413 while reading), write inside cork.

import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { Buffer } from 'node:buffer';
import { CommonsError } from '../../domain/errors.js';
import type { Credential } from '../admission/credential.js';
import type { AnswerHead } from '../edge/head.js';
import { finish, type InFlight, readBody, writeHead } from '../edge/io.js';
import { isHttpMethod, notHttpMessage } from '../edge/method.js';
import { peerAddress } from '../edge/peer.js';
import { errorBody, STATUS_OF } from '../runner/envelope.js';
import type { FastRead, LeanAnswer } from './fast-read.js';
import { MAX_BODY_BYTES, type RawRequest, type RawResponse } from './pipeline.js';

/** uWS closes a header block spanning reads past 4 KiB, but accepts a larger one arriving in a
 * single read; this makes the limit the same either way (docs/operator.md). */
export const MAX_HEADER_BYTES = 8 * 1024;

export function mountHttp(
  app: TemplatedApp,
  handle: (r: RawRequest) => Promise<RawResponse>,
  inflight: InFlight,
  head: AnswerHead,
  fast?: FastRead,
): void {
  const serve = (res: HttpResponse, req: HttpRequest, method: string, path: string): void => {
    const query = req.getQuery() ?? '';
    const headers: Record<string, string> = {};
    let headerBytes = path.length + query.length;
    req.forEach((k, v) => {
      headers[k] = v;
      headerBytes += k.length + v.length + 4;
    });
    if (headerBytes > MAX_HEADER_BYTES) {
      inflight.count++;
      const err = new CommonsError('PAYLOAD_TOO_LARGE', `request headers are at most ${MAX_HEADER_BYTES} bytes`);
      const body = errorBody(err, '');
      send(
        res,
        fresh(head),
        { status: 431, headers: { 'content-type': 'application/json; charset=utf-8', connection: 'close' }, body },
        inflight,
        true,
      );
      return;
    }
    if (inflight.stopping) {
      inflight.count++;
      const err = new CommonsError('UNAVAILABLE', 'this node is stopping; retry (another node or this one after its restart)', {
        retryAfterS: 1,
      });
      const headers = { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1', connection: 'close' };
      send(res, fresh(head), { status: 503, headers, body: errorBody(err, '') }, inflight, true);
      return;
    }
    if (!isHttpMethod(method)) {
      inflight.count++;
      const body = errorBody(new CommonsError('NOT_IMPLEMENTED', notHttpMessage(method)), '');
      const headers = { 'content-type': 'application/json; charset=utf-8', connection: 'close' };
      send(res, fresh(head), { status: 501, headers, body }, inflight, true);
      return;
    }
    // A read answered at once is written here, inside this callback (uWS corks it): no abort
    // handler, no promise (src/transport/http/fast-read.ts). The peer address costs a system call:
    // the lean path reads it only when it needs it.
    let credential: Credential | undefined;
    if (fast) {
      const lean = fast(method, path, query, headers, res);
      if (lean) {
        writeLean(res, lean);
        return;
      }
      credential = fast.presented;
      fast.presented = undefined;
    }
    const state = fresh(head);
    // The credential the lean path read, if it did, goes on with the request (read once).
    const raw: RawRequest = { method, path, query, headers, body: null, ip: peerAddress(res), credential };
    res.onAborted(() => {
      state.aborted = true;
      state.wake?.();
      finish(inflight, state);
    });
    inflight.count++;
    const run = () =>
      handle(raw).then(
        (out) => send(res, state, out, inflight, false, raw.method === 'HEAD'),
        () => send(res, state, { status: 500, headers: {}, body: '' }, inflight),
      );
    readBody(
      res,
      raw.method,
      headers,
      state,
      (body) => {
        raw.body = body;
        void run();
      },
      () => tooLarge(res, state, inflight),
    );
  };
  // Exactly as sent: uWS's getMethod() lower-cases the method in place (and would turn `get`
  // into GET's twin), so it is never called (method.ts).
  app.any('/*', (res: HttpResponse, req: HttpRequest) => serve(res, req, req.getCaseSensitiveMethod(), req.getUrl()));
  // The lean path's routes, GET on exact paths: uWS's router matched the method (case-sensitive)
  // and the path, so neither is read again (two calls and two strings a request). uWS prefers a
  // static route to the wildcard whatever the order; HEAD, any other method or another spelling
  // of the path takes '/*' as before.
  for (const p of fast?.paths ?? []) app.get(p, (res: HttpResponse, req: HttpRequest) => serve(res, req, 'GET', p));
}

function tooLarge(res: HttpResponse, state: StreamState, inflight: InFlight): void {
  const err = new CommonsError('PAYLOAD_TOO_LARGE', `request bodies are at most ${MAX_BODY_BYTES} bytes`);
  send(
    res,
    state,
    {
      status: STATUS_OF.PAYLOAD_TOO_LARGE,
      headers: { 'content-type': 'application/json; charset=utf-8', connection: 'close' },
      body: errorBody(err, ''),
    },
    inflight,
    true,
  );
}

function send(res: HttpResponse, state: StreamState, out: RawResponse, inflight: InFlight, close = false, head = false): void {
  if (state.aborted || state.done) return;
  if (out.stream && !head) {
    void sendStream(res, state, out, out.stream).finally(() => finish(inflight, state));
    return;
  }
  res.cork(() => write(res, state.head, out, close || inflight.stopping === true, head));
  finish(inflight, state);
}

const fresh = (head: AnswerHead): StreamState => ({ aborted: false, done: false, head });

const RATE_LIMIT = Buffer.from('ratelimit', 'latin1');

/** A lean read's answer (fast-read.ts), the same headers the general pipeline writes for a page:
 * the status and every header but RateLimit in one call, as bytes (a string argument costs uWS a
 * conversion and an allocation each), then the body. uWS copies each before returning (cork
 * buffer or socket). */
function writeLean(res: HttpResponse, a: LeanAnswer): void {
  res.writeStatus(a.head);
  if (a.rateLimit !== null) res.writeHeader(RATE_LIMIT, a.rateLimit);
  res.end(a.body, false);
}

function write(res: HttpResponse, answerHead: AnswerHead, out: RawResponse, closing: boolean, head: boolean): void {
  writeHead(res, out.status, answerHead);
  for (const k in out.headers) res.writeHeader(k, out.headers[k] as string);
  // A HEAD answer's body would be read by the client as the start of the next answer.
  if (head) res.endWithoutBody(Buffer.byteLength(out.body), closing);
  else res.end(out.body, closing);
}

/** Writes each chunk as it comes, waiting for the socket to drain when uWS reports backpressure.
 * A failure after the status line cannot become an error answer: the connection is closed, so
 * the client sees a truncated document rather than a complete-looking one. */
interface StreamState {
  aborted: boolean;
  done: boolean;
  /** The headers every answer carries (head.ts). */
  head: AnswerHead;
  /** Resumes a stream waiting for the socket to drain when the client goes away instead. */
  wake?: () => void;
}

async function sendStream(res: HttpResponse, state: StreamState, out: RawResponse, chunks: AsyncIterable<string>): Promise<void> {
  res.cork(() => {
    writeHead(res, out.status, state.head);
    for (const [k, v] of Object.entries(out.headers)) res.writeHeader(k, v);
  });
  try {
    for await (const chunk of chunks) {
      if (state.aborted) return;
      let drained = true;
      res.cork(() => {
        drained = res.write(chunk);
      });
      if (!drained) {
        await new Promise<void>((ok) => {
          state.wake = ok;
          res.onWritable(() => {
            ok();
            return true;
          });
        });
      }
    }
    if (!state.aborted) res.cork(() => res.end());
  } catch {
    if (!state.aborted) res.close();
  }
}

export type { InFlight };
