// The command line's environment, read once and passed down as a value (STYLE.md 7): where the
// service is, which token to use and where the token is kept.
import { homedir } from 'node:os';
import { join } from 'node:path';

export const DEFAULT_SERVER = 'http://127.0.0.1:8080';

export interface Settings {
  /** COMMONS_URL, or the default; --server overrides it. */
  server: string;
  /** COMMONS_TOKEN: used instead of the stored token when set. */
  envToken: string | undefined;
  /** OPERATOR_TOKEN: `status` adds the report queue with it. */
  operatorToken: string | undefined;
  /** $XDG_CONFIG_HOME/commons (default ~/.config/commons): the stored tokens. */
  configDir: string;
  /** The longest Retry-After the command waits out before giving up (COMMONS_MAX_WAIT_S, default 30). */
  maxWaitS: number;
  stdoutIsTty: boolean;
  stdinIsTty: boolean;
}

export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const xdg = env.XDG_CONFIG_HOME?.startsWith('/') ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), '.config');
  const wait = Number(env.COMMONS_MAX_WAIT_S ?? '30');
  return {
    server: env.COMMONS_URL || DEFAULT_SERVER,
    envToken: env.COMMONS_TOKEN || undefined,
    operatorToken: env.OPERATOR_TOKEN || undefined,
    configDir: join(xdg, 'commons'),
    maxWaitS: Number.isFinite(wait) && wait >= 0 ? wait : 30,
    stdoutIsTty: Boolean(process.stdout.isTTY),
    stdinIsTty: Boolean(process.stdin.isTTY),
  };
}
