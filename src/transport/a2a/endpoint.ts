// The A2A JSON-RPC endpoint (DECISIONS.md "Tool protocols"): @a2a-js/sdk's request handler and
// its two JSON-RPC transport handlers, 1.0 (SendMessage) and 0.3 (message/send), behind uWS.
// Every answer is an immediate message (no tasks, no streaming), so any node can answer.

import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { decodeJson, ENVELOPE_DEPTH } from '../admission/decode.js';
import { jsonError, type WebHandler, type WebInfo } from '../edge/web.js';
import { A2A_PATH } from '../paths.js';
import { type ActionDeps, errorView } from '../runner/actions.js';
import { toCommonsError } from '../runner/envelope.js';
import { agentCard } from './card.js';
import { CommonsExecutor, ISSUED_KEY, WHO_KEY } from './executor.js';

interface Handlers {
  base: string;
  v1: JsonRpcTransportHandler;
  legacy: LegacyJsonRpcTransportHandler;
}

/** The endpoint's handler (mounted by app.ts, which loads this module and the SDK on the first
 * request: issue 47, the SDKs stay out of an idle node's memory). */
export function a2aHandler(deps: ActionDeps): WebHandler {
  let handlers: Handlers | null = null;
  // The card names the public URL, known only once the server listens: built on first use.
  const get = (): Handlers => {
    const base = deps.ctx.publicUrl();
    if (handlers?.base !== base) {
      const rh = new DefaultRequestHandler(agentCard(base), new InMemoryTaskStore(), new CommonsExecutor(deps));
      handlers = { base, v1: new JsonRpcTransportHandler(rh), legacy: new LegacyJsonRpcTransportHandler(rh) };
    }
    return handlers;
  };
  return (req, info) => handleA2a(get(), req, info);
}

/** 0.3 clients send no A2A-Version header; 1.0 clients send "1.0". */
const SUPPORTED = new Set(['1.0', '0.3']);
const majorMinor = (v: string): string => v.trim().split('.').slice(0, 2).join('.');

async function handleA2a(h: Handlers, request: Request, info: WebInfo): Promise<Response> {
  if (request.method !== 'POST') {
    const res = jsonError(405, `POST JSON-RPC requests to ${A2A_PATH}; the agent card is at /.well-known/agent-card.json`);
    res.headers.set('allow', 'POST');
    return res;
  }
  const header = request.headers.get('a2a-version');
  if (header !== null && !SUPPORTED.has(majorMinor(header))) {
    // -32009: the 1.0 VersionNotSupportedError code.
    return Response.json({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32009, message: `A2A version ${header} is not supported; use 1.0 or 0.3` },
    });
  }
  // Decoded as every door decodes (src/transport/admission/decode.ts): UTF-8, nesting, no prototype
  // keys; a refusal is a JSON-RPC error with our code in its data (-32700 for what is not JSON).
  let body: unknown;
  try {
    body = decodeJson(new Uint8Array(await request.arrayBuffer()), 'the request', ENVELOPE_DEPTH);
  } catch (err) {
    const e = toCommonsError(err);
    const code = e.code === 'INVALID_JSON' ? -32700 : -32602;
    return Response.json({ jsonrpc: '2.0', id: null, error: { code, message: e.message, data: errorView(e) } });
  }
  // An id JSON-RPC does not allow (an object, an array) is not echoed back: -32600 with id null.
  const id = body !== null && typeof body === 'object' ? (body as { id?: unknown }).id : undefined;
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') {
    return Response.json({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'a JSON-RPC id is a string, a number or null' } });
  }
  const method = body && typeof body === 'object' ? (body as { method?: unknown }).method : undefined;
  // 0.3 method names are paths (message/send); 1.0 names are PascalCase (SendMessage).
  const legacy = typeof method === 'string' ? method.includes('/') : header === null || majorMinor(header) === '0.3';
  const context = new ServerCallContext({
    requestedVersion: legacy ? '0.3' : '1.0',
    state: new Map<string, unknown>([[WHO_KEY, { headers: info.headers, ip: info.ip }]]),
  });
  let out: Awaited<ReturnType<JsonRpcTransportHandler['handle']>>;
  try {
    out = legacy ? await h.legacy.handle(body as string, context) : await h.v1.handle(body as string, context);
  } catch {
    // The SDK threw on a request it could not read: bad input, not a fault of ours (never a 500).
    const id = idOf(body);
    return Response.json({ jsonrpc: '2.0', id, error: { code: -32600, message: 'the request is not a JSON-RPC request A2A can read' } });
  }
  if (typeof (out as AsyncGenerator)[Symbol.asyncIterator] === 'function') {
    // Unreachable while the card says streaming: false (the SDK refuses first); never hang.
    await (out as AsyncGenerator).return(undefined);
    return jsonError(400, 'streaming is not offered', -32004);
  }
  const headers: Record<string, string> = { 'cache-control': 'no-store' };
  const issued = context.state.get(ISSUED_KEY) as { number: string; token: string } | undefined;
  if (issued) {
    headers['x-commons-guest'] = issued.number;
    headers['x-commons-guest-token'] = issued.token;
  }
  return Response.json(out, { headers });
}

const idOf = (body: unknown): string | number | null => {
  const id = body !== null && typeof body === 'object' ? (body as { id?: unknown }).id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
};
