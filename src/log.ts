// Structured logs (pino). Tokens and memory never reach a log line: credential headers are
// redacted, and request logs carry only method, route, status, duration and the request id.
import { type Logger, pino } from 'pino';

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: ['authorization', 'token', 'api_token', '*.authorization', '*.token', '*.api_token', 'headers.authorization'],
      censor: '[redacted]',
    },
  });
}
