// The command line's outcomes and their exit codes: 0 done, 1 refused by the service (its error
// code and `next` printed), 2 a usage mistake, 3 the service unreachable (or unavailable after the
// retries its Retry-After allowed).
import type { WireError } from './wire.js';

export const EXIT = { done: 0, refused: 1, usage: 2, unreachable: 3 } as const;

export class UsageError extends Error {
  /** The command whose usage to show with the message (absent: the general one). */
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

/** The service answered with its error envelope. `body` is the answer as received (--json prints it). */
export class Refused extends Error {
  constructor(
    readonly status: number,
    readonly error: WireError,
    readonly body: unknown,
  ) {
    super(`${error.code}: ${error.message}`);
  }
}

export class Unreachable extends Error {
  constructor(
    message: string,
    /** The last answer, when the service answered 503 until the retries ran out. */
    readonly body?: unknown,
  ) {
    super(message);
  }
}
