// `commons`: the command line of the Commons (bin of the package, built to dist/cli.js). It reads
// argv against the operation table (table.ts), runs one command against the service and exits
// 0 done, 1 refused by the service, 2 usage, 3 unreachable (errors.ts).
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { bashCompletion, zshCompletion } from './completion.js';
import { loadIdentity } from './credentials.js';
import { EXIT, Refused, Unreachable, UsageError } from './errors.js';
import { commandHelp, overview } from './help.js';
import { Client } from './http.js';
import { Out } from './output.js';
import { readSettings, type Settings } from './settings.js';
import { commandsUnder, findCommand, GLOBAL_OPTIONS } from './table.js';
import type { Command, Parsed, RunCtx } from './types.js';

/** The leading command words of argv: tokens before the first option, global options skipped. */
function commandWords(argv: string[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < argv.length && words.length < 2; i++) {
    const a = argv[i] as string;
    if (a === '--server') i++;
    else if (a.startsWith('--server=') || a === '--json' || a === '--help' || a === '-h') continue;
    else if (a.startsWith('-')) break;
    else words.push(a);
  }
  return words;
}

function parse(c: Command, argv: string[]): Parsed & { global: { server?: string; json?: boolean; help?: boolean } } {
  const drop = c.name.split(' ');
  const rest = [...argv];
  for (const w of drop) rest.splice(rest.indexOf(w), 1);
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: rest,
      options: { ...GLOBAL_OPTIONS, ...(c.options ?? {}) },
      allowPositionals: true,
      strict: true,
    }) as {
      values: Record<string, string | boolean | undefined>;
      positionals: string[];
    });
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/\. To specify a positional.*$/s, ''), c.name);
  }
  const { server, json, help, ...opts } = values;
  const global = { server: server as string | undefined, json: json as boolean | undefined, help: help as boolean | undefined };
  if (help) return { args: positionals, opts, global };
  const args = c.args ?? [];
  const required = args.filter((a) => !a.optional).length;
  if (positionals.length < required) throw new UsageError(`missing ${args[positionals.length]?.name ?? 'an argument'}`, c.name);
  if (positionals.length > args.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[args.length])}`, c.name);
  return { args: positionals, opts, global };
}

function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  return rl.question(question).finally(() => rl.close());
}

function report(e: unknown, out: Out): number {
  if (e instanceof UsageError) {
    const c = e.command ? findCommand(e.command.split(' ')) : undefined;
    out.note(`commons: ${e.message}`);
    out.note(c ? `usage: see commons ${c.name} --help` : 'see commons --help');
    return EXIT.usage;
  }
  if (e instanceof Refused) {
    if (out.json) out.document(e.body);
    const n = e.error.next;
    out.note(`refused: ${e.status} ${e.error.code}: ${e.error.message}`);
    for (const f of e.error.fields ?? []) out.note(`  ${f.path}: ${f.message}`);
    if (n) out.note(`next: ${n.method} ${n.path}${n.doc ? ` (${n.doc})` : ''}`);
    return EXIT.refused;
  }
  if (e instanceof Unreachable) {
    if (out.json && e.body !== undefined) out.document(e.body);
    out.note(`unreachable: ${e.message}`);
    return EXIT.unreachable;
  }
  out.note(`commons: ${(e as Error).stack ?? String(e)}`);
  return EXIT.unreachable;
}

export async function main(argv: string[], settings: Settings = readSettings()): Promise<number> {
  const words = commandWords(argv);
  const json = argv.includes('--json');
  const out = new Out(json);
  const wantsHelp = argv.includes('--help') || argv.includes('-h');
  if (words[0] === 'help' || (words.length === 0 && wantsHelp)) {
    const c = findCommand(words.slice(1));
    process.stdout.write(c ? commandHelp(c) : overview(words.length > 1 ? commandsUnder(words.slice(1)) : undefined));
    return EXIT.done;
  }
  if (words[0] === 'completion') {
    const shell = words[1];
    if (shell === 'bash') process.stdout.write(bashCompletion());
    else if (shell === 'zsh') process.stdout.write(zshCompletion());
    else return report(new UsageError('completion takes bash or zsh'), out);
    return EXIT.done;
  }
  const c = findCommand(words);
  if (!c) {
    const group = commandsUnder(words.slice(0, 1));
    if (words.length > 0 && group.length > 0 && !group.some((g) => g.name === words[0])) {
      process.stderr.write(overview(group));
      return report(new UsageError(`${words[0]} needs one of: ${group.map((g) => g.name.split(' ')[1]).join(', ')}`), out);
    }
    if (words.length === 0) process.stderr.write(overview());
    return report(new UsageError(words.length ? `unknown command ${JSON.stringify(words.join(' '))}` : 'no command given'), out);
  }
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const p = parse(c, argv);
    if (p.global.help) {
      process.stdout.write(commandHelp(c));
      return EXIT.done;
    }
    const server = (p.global.server ?? settings.server).replace(/\/+$/, '');
    if (!/^https?:\/\/[^/]/.test(server)) throw new UsageError(`--server takes an http(s) URL, not ${JSON.stringify(server)}`);
    const stored = loadIdentity(settings.configDir, server);
    const client = new Client({
      server,
      token: settings.envToken ?? stored?.token,
      operatorToken: settings.operatorToken,
      maxWaitS: settings.maxWaitS,
      note: (l) => out.note(l),
    });
    const ctx: RunCtx = { client, out, settings, stored, ask, stop: stop.signal };
    await c.run(ctx, p);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.done;
  } catch (e) {
    return report(e, out);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

// A reader that stops early (`commons chat --tail | head -3`) closes the pipe: that ends the command, quietly.
process.stdout.on('error', (e: NodeJS.ErrnoException) => process.exit(e.code === 'EPIPE' ? EXIT.done : EXIT.unreachable));
const code = await main(process.argv.slice(2));
// Written output is flushed before exiting (a pipe may still hold it).
process.stdout.write('', () => process.exit(code));
