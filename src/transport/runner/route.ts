// A route is a plain description plus a function from a parsed request to a result (STYLE.md 2),
// so handlers are testable without a socket and the OpenAPI document is generated from the same
// zod schemas that validate requests.
import type { z } from 'zod';
import type { Caller } from '../../domain/caller.js';
import type { CommonsError, ErrorCode } from '../../domain/errors.js';
import type { Ctx } from '../../domain/ports.js';
import type { Credential } from '../admission/credential.js';
import { strict } from '../admission/strict.js';
import type { Page } from './pages.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * none: anyone (the caller is still resolved; anonymous callers become guests);
 * member: a registered identity's token (401 REGISTRATION_REQUIRED otherwise);
 * operator: the OPERATOR_TOKEN.
 */
export type AuthMode = 'none' | 'member' | 'operator';

/** Rate-limit class (src/transport/admission/limits/); derived from method and path when absent. */
export type LimitClass = 'chat' | 'register' | 'recover' | 'write' | 'read' | 'none';

export interface Req<B = unknown, Q = unknown, P = unknown> {
  method: Method;
  path: string;
  params: P;
  query: Q;
  body: B;
  headers: Record<string, string>;
  /** The request's one credential (credential.ts): what it presented, read once. */
  credential: Credential;
  caller: Caller;
  ip: string;
  requestId: string;
  /** Set by the operation runner (src/transport/runner/operation.ts). */
  nested: Nested;
}

/** What a handler may reach of the runner that runs it: the operator console's actions are the
 * operator API's own operations, run as part of the console's request (same request id). */
export interface Nested {
  /** Runs another route's operation through the same runner, with this request's address and id. */
  run(
    route: AnyRoute,
    input: {
      params?: Record<string, string>;
      query?: Record<string, unknown>;
      body?: unknown;
      headers: Record<string, string>;
      /** The credential to run with (the operator console's: the operator's own). */
      credential?: Credential;
    },
  ): Promise<Result>;
  /** A secret checked by the handler itself (the console's sign-in), under the per-address budget
   * of failed credentials (admission/admit.ts admitSecret); `known`: the secret is already known to
   * be right and takes no point. */
  admitSecret<T>(known: boolean, check: () => Promise<T>): Promise<T>;
}

/** A precheck's refusal: its answer, and what it records (a decline's public count), which a keyed
 * request records once, keeping the refusal as the key's answer. */
export interface PrecheckRefusal {
  error: CommonsError;
  record?: (ctx: Ctx) => Promise<void>;
}

/** A raw document (HTML, XML, text or JSON without the envelope). */
export type RawResult = { status?: number; raw: string | Buffer; contentType: string; headers?: Record<string, string> };

/** `data` is typed by the route's response schema (RouteDef.handler), so the published schema and
 * what the handler returns are checked against each other by the compiler. */
export type Result<D = unknown> =
  | { status?: number; data: D; headers?: Record<string, string> }
  /** A page serialized once per change (src/transport/runner/pages.ts): ETag and 304 handled by the
   * pipeline; `data` is what the page shows, for the tool protocols. */
  | { page: Page; data: D; headers?: Record<string, string> }
  | RawResult
  /** A document written as it is produced (an agent's export); the status is sent first. */
  | { status?: number; stream: AsyncIterable<string>; contentType: string; headers?: Record<string, string> };

export interface RouteDef<
  B extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  P extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
> {
  method: Method;
  /** The literal path, parameters as `{name}` as in the OpenAPI document, e.g. /api/v1/ai/{registration_number} */
  path: string;
  auth: AuthMode;
  summary: string;
  tags: string[];
  body?: B;
  query?: Q;
  params?: P;
  /** Schema of `data` on success (or of the raw JSON document when `raw` is set). Required: the
   * OpenAPI document publishes it and the test suite's contract gate checks every answer by it. */
  response: R;
  /** Answers besides 200 and the error codes (e.g. 304 Not Modified): `body` when the answer
   * carries the same document as the 200 (a raw readiness report answering 503). */
  statuses?: Record<number, { description: string; body?: boolean }>;
  /** false: a caller without a credential is not issued a guest (registration). */
  issuesGuest?: false;
  /** Error codes this operation can answer besides the common ones. */
  errors?: ErrorCode[];
  /** Served without the envelope (documents whose readers expect a fixed format). */
  raw?: boolean;
  /** Media type of a raw answer that is not JSON (text, XML), for the OpenAPI document. */
  produces?: string;
  /** Other media types the 200 may answer with (text documents), each with what it says. */
  alsoProduces?: Record<string, string>;
  /** Answers with a page (a `page` result) that carries an ETag: documented with 304 like raw GETs. */
  etag?: boolean;
  /** A protocol upgrade endpoint (e.g. `websocket`): documented with 101 instead of 200. */
  switchesTo?: string;
  /** Leave out of the endpoint lists of the agents' documents (discovery, llms.txt); the OpenAPI
   * document still describes it (e.g. the operator console's pages, which are for people). */
  hidden?: boolean;
  /** The handler's write checks a member token in its own transaction (sql/020_chat_post_tokens.sql,
   * sql/functions/member_tokens_check.sql), so the pipeline may take the member from the node's
   * token cache (src/transport/admission/resolve-caller.ts), on a member route too. */
  tokenInWrite?: boolean;
  /** The body is an HTML form (application/x-www-form-urlencoded), read into an object of strings
   * before validation (the operator console's forms). */
  form?: true;
  /** The answer carries a credential (an api_token, a generated webhook secret): an
   * Idempotency-Key on it must be at least 22 characters, whoever sends it
   * (src/transport/admission/idempotent.ts). */
  credentialAnswer?: true;
  /** Rate-limit class when the derived one does not fit. */
  limit?: LimitClass;
  /** Decides from the parsed JSON body alone, before schema validation, a refusal answered whatever
   * else the body holds (declining the constitution), or undefined to go on. */
  precheck?: (body: unknown) => PrecheckRefusal | undefined;
  /**
   * The lean read path (src/transport/http/fast-read.ts): a GET on an open route whose answer is
   * already serialized returns its page at once, without waiting for anything, or undefined to go
   * through the general pipeline. It must answer exactly what `handler` would for the same query.
   */
  cached?: (query: z.output<Q>, ctx: Ctx) => Page | undefined;
  handler: (req: Req<z.output<B>, z.output<Q>, z.output<P>>, ctx: Ctx) => Promise<Result<z.input<R>>> | Result<z.input<R>>;
}

// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous list of routes.
export type AnyRoute = RouteDef<any, any, any, any>;

export function route<
  B extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  P extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
>(def: RouteDef<B, Q, P, R>): AnyRoute {
  // Every write spends the caller's write budget, whatever door it comes through (DECISIONS.md
  // "Every door, the same rules"): a write cannot be declared free or a read.
  if (def.method !== 'GET' && (def.limit === 'none' || def.limit === 'read')) {
    throw new Error(`${def.method} ${def.path}: a write's rate-limit class cannot be ${def.limit}`);
  }
  // Bodies refuse unknown fields (src/transport/admission/strict.ts); query parameters stay lenient.
  return (def.body ? { ...def, body: strict(def.body) } : def) as AnyRoute;
}

export const ok = <D>(data: D, status = 200): Result<D> => ({ status, data });
