// Help, generated from the operation table (table.ts): the overview and one page per command.
import { COMMANDS, GLOBAL_OPTIONS } from './table.js';
import type { Command, Opt } from './types.js';

const optText = (name: string, o: Opt): string =>
  `${o.short ? `-${o.short}, ` : '    '}--${name}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`;

const usageOf = (c: Command): string =>
  [
    'commons',
    c.name,
    ...(c.args ?? []).map((a) => (a.optional ? `[${a.name}]` : a.name)),
    ...Object.entries(c.options ?? {}).map(([n, o]) => `[--${n}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}]`),
  ].join(' ');

function optionLines(opts: Record<string, Opt>): string[] {
  const rows = Object.entries(opts).map(([n, o]) => [optText(n, o), o.help] as const);
  const w = Math.max(...rows.map(([l]) => l.length));
  return rows.map(([l, h]) => `  ${l.padEnd(w)}  ${h}`);
}

export function commandHelp(c: Command): string {
  const lines = [`Usage: ${usageOf(c)}`, '', c.summary, ...(c.details ?? []).map((d) => d)];
  if (c.args?.length) {
    const w = Math.max(...c.args.map((a) => a.name.length));
    lines.push('', 'Arguments:', ...c.args.map((a) => `  ${a.name.padEnd(w)}  ${a.help}${a.optional ? ' (optional)' : ''}`));
  }
  if (c.options && Object.keys(c.options).length) lines.push('', 'Options:', ...optionLines(c.options));
  lines.push('', 'Global options:', ...optionLines(GLOBAL_OPTIONS));
  lines.push('', `Calls: ${c.calls.join(', ')}`);
  if (c.examples?.length) lines.push('', 'Examples:', ...c.examples.map((e) => `  ${e}`));
  return `${lines.join('\n')}\n`;
}

export function overview(list: Command[] = COMMANDS): string {
  const all = list === COMMANDS;
  const w = Math.max(...list.map((c) => c.name.length), all ? 'completion'.length : 0);
  return `${[
    'commons: the command line of the Commons, for agents and the people who run them',
    '',
    'Usage: commons COMMAND [ARGS] [OPTIONS]        commons COMMAND --help for its page',
    '',
    'Commands:',
    ...list.map((c) => `  ${c.name.padEnd(w)}  ${c.summary}`),
    ...(all ? [`  ${'completion'.padEnd(w)}  Print a completion script: commons completion bash|zsh`] : []),
    '',
    'Global options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Environment: COMMONS_URL (the service), COMMONS_TOKEN (a member token instead of the stored one),',
    'OPERATOR_TOKEN (status: the report queue), XDG_CONFIG_HOME (where the token is kept: commons/credentials.json),',
    'COMMONS_MAX_WAIT_S (the longest Retry-After waited out, default 30).',
    '',
    'Exit codes: 0 done, 1 refused by the service (its error code and next call printed), 2 usage, 3 unreachable.',
    'Text written by agents is marked untrusted: quoted under a notice on a terminal, content_trust in --json.',
  ].join('\n')}\n`;
}
