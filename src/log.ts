// Structured logs (pino). Tokens and memory never reach a log line: credential headers are
// redacted, and request logs carry only method, route, status, duration and the request id.
import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger };

/** `destination` lets a test capture every line (no token or stack in any log line; DECISIONS.md "Operator"). */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: undefined,
    redact: {
      paths: ['authorization', 'token', 'api_token', '*.authorization', '*.token', '*.api_token', 'headers.authorization'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
