// Shell completion for bash and zsh, generated from the operation table: command words, then
// each command's options (and the global ones).
import { COMMANDS, GLOBAL_OPTIONS } from './table.js';

function tree(): { top: string[]; subs: Record<string, string[]>; opts: Record<string, string[]> } {
  const top = new Set<string>(['completion']);
  const subs: Record<string, string[]> = { completion: ['bash', 'zsh'] };
  const opts: Record<string, string[]> = {};
  const globals = Object.keys(GLOBAL_OPTIONS).map((o) => `--${o}`);
  for (const c of COMMANDS) {
    const [first, second] = c.name.split(' ') as [string, string | undefined];
    top.add(first);
    if (second) subs[first] = [...(subs[first] ?? []), second];
    opts[c.name.replace(' ', '_')] = [...Object.keys(c.options ?? {}).map((o) => `--${o}`), ...globals];
  }
  return { top: [...top], subs, opts };
}

export function bashCompletion(): string {
  const t = tree();
  const subCases = Object.entries(t.subs)
    .map(([k, v]) => `    ${k}) subs="${v.join(' ')}" ;;`)
    .join('\n');
  const optCases = Object.entries(t.opts)
    .map(([k, v]) => `    ${k}) opts="${v.join(' ')}" ;;`)
    .join('\n');
  return `# bash completion for commons: eval "$(commons completion bash)"
_commons() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" first="\${COMP_WORDS[1]}" second="\${COMP_WORDS[2]}" subs="" opts=""
  if [ "$COMP_CWORD" -eq 1 ]; then COMPREPLY=( $(compgen -W "${t.top.join(' ')} --help --json --server" -- "$cur") ); return; fi
  case "$first" in
${subCases}
  esac
  if [ "$COMP_CWORD" -eq 2 ] && [ -n "$subs" ] && [[ "$cur" != -* ]]; then COMPREPLY=( $(compgen -W "$subs" -- "$cur") ); return; fi
  local key="$first"; if [ -n "$subs" ] && [[ " $subs " == *" $second "* ]]; then key="\${first}_\${second}"; fi
  case "$key" in
${optCases}
  esac
  COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
}
complete -o default -F _commons commons
`;
}

export function zshCompletion(): string {
  const t = tree();
  const subCases = Object.entries(t.subs)
    .map(([k, v]) => `    ${k}) subs=(${v.join(' ')}) ;;`)
    .join('\n');
  const optCases = Object.entries(t.opts)
    .map(([k, v]) => `    ${k}) opts=(${v.join(' ')}) ;;`)
    .join('\n');
  return `#compdef commons
# zsh completion for commons: eval "$(commons completion zsh)", or save as _commons on your fpath
_commons() {
  local -a subs opts
  if (( CURRENT == 2 )); then compadd -- ${t.top.join(' ')} --help --json --server; return; fi
  case "\${words[2]}" in
${subCases}
  esac
  if (( CURRENT == 3 )) && (( \${#subs} )) && [[ "\${words[CURRENT]}" != -* ]]; then compadd -- $subs; return; fi
  local key="\${words[2]}"; if (( \${subs[(Ie)\${words[3]}]} )); then key="\${words[2]}_\${words[3]}"; fi
  case "$key" in
${optCases}
  esac
  compadd -- $opts
  _files
}
if [ "$funcstack[1]" = "_commons" ]; then _commons "$@"; else compdef _commons commons; fi
`;
}
