// The operation table of the command line: every command, in the order help lists them. Parsing
// (main.ts), `commons --help`, `commons COMMAND --help` and shell completion (help.ts,
// completion.ts) are generated from this one list; each entry names the service operations it
// calls, as the service's route table names them (the CLI's test checks each one exists).
import { identityCommands } from './cmd-identity.js';
import { talkCommands } from './cmd-talk.js';
import { treasuryCommands } from './cmd-treasury.js';
import { watchCommands } from './cmd-watch.js';
import { workCommands } from './cmd-work.js';
import type { Command, Opt } from './types.js';

export const COMMANDS: Command[] = [...identityCommands, ...talkCommands, ...workCommands, ...treasuryCommands, ...watchCommands];

/** Options every command takes. */
export const GLOBAL_OPTIONS: Record<string, Opt> = {
  server: { type: 'string', value: 'URL', help: 'the service (default $COMMONS_URL, else http://127.0.0.1:8080)' },
  json: { type: 'boolean', help: 'print the JSON answer (one document; JSON Lines with --tail/--follow/--every)' },
  help: { type: 'boolean', short: 'h', help: 'show help' },
};

/** The command named by the leading words of argv (the longest name that matches). */
export function findCommand(words: string[]): Command | undefined {
  let best: Command | undefined;
  for (const c of COMMANDS) {
    const name = c.name.split(' ');
    if (name.every((w, i) => words[i] === w) && name.length > (best?.name.split(' ').length ?? 0)) best = c;
  }
  return best;
}

/** Commands whose name starts with these words (`commons task` lists the task commands). */
export const commandsUnder = (words: string[]): Command[] => COMMANDS.filter((c) => words.every((w, i) => c.name.split(' ')[i] === w));
