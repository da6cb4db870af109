// The shape of the operation table (table.ts): each command says what it takes, which operations
// of the service's route table it calls, and how it runs. Help, completion and parsing are all
// generated from these entries.
import type { Identity } from './credentials.js';
import type { Client } from './http.js';
import type { Out } from './output.js';
import type { Settings } from './settings.js';

export interface Opt {
  type: 'string' | 'boolean';
  short?: string;
  /** The placeholder of a string option's value in help (e.g. N, URL). */
  value?: string;
  help: string;
}

export interface Arg {
  name: string;
  help: string;
  optional?: boolean;
}

export interface Parsed {
  args: string[];
  opts: Record<string, string | boolean | undefined>;
}

export interface RunCtx {
  client: Client;
  out: Out;
  settings: Settings;
  /** The identity stored for this service, if any (the token may come from COMMONS_TOKEN instead). */
  stored: Identity | undefined;
  /** Asks a question on the terminal; resolves with the answer line. */
  ask(question: string): Promise<string>;
  /** Aborted by SIGINT or SIGTERM: a following command ends cleanly (exit 0). */
  stop: AbortSignal;
}

export interface Command {
  /** Words that name it: 'chat', 'task post'. */
  name: string;
  summary: string;
  /** More lines for `commons COMMAND --help`. */
  details?: string[];
  args?: Arg[];
  options?: Record<string, Opt>;
  /** The operations it calls, as the route table names them ('POST /api/v1/chat'), or 'STREAM <topic>'. */
  calls: string[];
  examples?: string[];
  run(ctx: RunCtx, p: Parsed): Promise<void>;
}
