// What the runner (operation.ts) takes and gives, for every way in.
import type { Caller } from '../../domain/caller.js';
import type { GuestIssuer } from '../../domain/guests.js';
import type { Ctx } from '../../domain/ports.js';
import type { Credential } from '../admission/credential.js';
import type { RateLimits } from '../admission/limits/rate-limits.js';
import type { LimitSubject } from '../admission/limits/subject.js';
import type { AnyRoute } from './route.js';

export interface OperationDeps {
  ctx: Ctx;
  guests: GuestIssuer;
  /** Absent when RATE_LIMITS=off. */
  limits?: RateLimits | undefined;
}

export interface OperationCall {
  route: AnyRoute;
  /** The request's own method and path (HTTP: HEAD, and the path with its parameters filled in);
   * the route's when absent (tools and stream ops). */
  method?: string;
  path?: string;
  /** Raw path parameters and query values. */
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  /** The body: the request's bytes (decoded by the admission path after the limit) or the value a
   * door already decoded by the same rules (src/transport/admission/decode.ts). */
  body?: { bytes: Buffer | null; contentType: string | undefined } | { value: unknown };
  headers: Record<string, string>;
  /** The request's one credential (credential.ts), when the transport read it already (HTTP);
   * else it is read from `headers` here. */
  credential?: Credential;
  /** The client address (TRUST_PROXY applied). */
  ip: string;
  requestId: string;
  /** The door's own check of its arguments, run once the request is admitted (actions.ts). */
  check?: () => void;
  /** A caller already known (a stream session after `auth`): its credentials are not resolved
   * again, and its limits count against `subject`. */
  session?: { caller: Caller; subject: LimitSubject };
}

/** What a transport shows besides the result, also when the operation fails. */
export interface OperationOut {
  /** RateLimit and RateLimit-Policy headers. */
  headers: Record<string, string>;
  /** A guest issued to an anonymous caller, announced in headers (or the tool's answer). */
  issued?: { number: string; token: string };
  /** The answer is a stored one, given again for a repeated Idempotency-Key (src/transport/admission/idempotent.ts). */
  replayed?: boolean;
}
