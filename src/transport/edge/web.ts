// A uWS adapter for web-standard handlers (Request -> Response), for the protocol endpoints whose
// SDKs speak the Fetch API (MCP, A2A). Same rules as src/transport/http/uws.ts (STYLE.md 1): copy the request
// synchronously, stream the body with the 64 KiB cap, write inside cork, never after an abort.

import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { BODY_MAX_BYTES as MAX_BODY_BYTES } from '../../domain/limits.js';
import type { AnswerHead } from './head.js';
import { finish, type InFlight, readBody, writeHead } from './io.js';
import { isHttpMethod, notHttpMessage } from './method.js';
import { peerAddress } from './peer.js';

export interface WebInfo {
  ip: string;
  /** The request headers as uWS gave them (lower-case names). */
  headers: Record<string, string>;
}

export type WebHandler = (req: Request, info: WebInfo) => Promise<Response>;

/** Methods a Fetch Request cannot carry as sent: it upper-cases these six (so `post` would pass for
 * POST) and refuses the forbidden three. */
const NORMALISED = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT']);
const FORBIDDEN = new Set(['CONNECT', 'TRACE', 'TRACK']);

/** `allow`: the Allow header of the handler's own 405 answer, used for the methods it cannot be
 * given (method.ts). */
export function mountWeb(
  app: TemplatedApp,
  pattern: string,
  handler: WebHandler,
  inflight: InFlight,
  head: AnswerHead,
  allow: string,
): void {
  app.any(pattern, (res: HttpResponse, req: HttpRequest) => {
    const state: WriteState = { aborted: false, done: false, head };
    // Exactly as sent (getMethod() lower-cases it in place; see src/transport/http/uws.ts).
    const method = req.getCaseSensitiveMethod();
    inflight.count++;
    res.onAborted(() => {
      state.aborted = true;
      finish(inflight, state);
    });
    const headers: Record<string, string> = {};
    req.forEach((k, v) => {
      headers[k] = v;
    });
    const upper = method.toUpperCase();
    if (!isHttpMethod(method)) {
      void write(res, state, inflight, jsonError(501, notHttpMessage(method)), true);
      return;
    }
    if ((NORMALISED.has(upper) && method !== upper) || FORBIDDEN.has(upper)) {
      const out = jsonError(405, `${method} is not allowed on ${pattern}; allowed: ${allow}`);
      out.headers.set('allow', allow);
      void write(res, state, inflight, out);
      return;
    }
    const query = req.getQuery();
    const url = `http://${headers.host ?? 'localhost'}${req.getUrl()}${query ? `?${query}` : ''}`;
    const ip = peerAddress(res);
    const run = (body: Buffer | null) => {
      let request: Request;
      try {
        request = new Request(url, { method, headers, ...(body && body.length > 0 ? { body: new Uint8Array(body) } : {}) });
      } catch {
        void write(res, state, inflight, jsonError(400, 'malformed request'));
        return;
      }
      handler(request, { ip, headers }).then(
        (out) => write(res, state, inflight, out),
        () => write(res, state, inflight, jsonError(500, 'internal error')),
      );
    };
    const tooLarge = () => jsonError(413, `request bodies are at most ${MAX_BODY_BYTES} bytes`);
    readBody(res, method, headers, state, run, () => void write(res, state, inflight, tooLarge(), true));
  });
}

/** A JSON-RPC error answer for faults outside the protocol handler (size, malformed request). */
export function jsonError(status: number, message: string, code = -32600): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

interface WriteState {
  aborted: boolean;
  done: boolean;
  head: AnswerHead;
}

async function write(res: HttpResponse, state: WriteState, inflight: InFlight, out: Response, close = false) {
  if (state.aborted || state.done) return;
  // The protocol answers here are single JSON documents (no streams), so reading them whole is fine.
  const body = Buffer.from(await out.arrayBuffer());
  if (state.aborted || state.done) return;
  res.cork(() => {
    writeHead(res, out.status, state.head);
    out.headers.forEach((v, k) => {
      if (k !== 'content-length') res.writeHeader(k, v);
    });
    res.end(body, close);
  });
  finish(inflight, state);
}
