// Sums a sampling heap profile (bench/lib/alloc-probe.mjs) by allocating function, and by the
// first frame of ours (dist/ or src/) on its stack: `node bench/lib/alloc-top.mjs profile.json [posts]`.
import { readFileSync } from 'node:fs';

const [file, postsArg] = process.argv.slice(2);
const posts = Number(postsArg ?? 1);
const { head } = JSON.parse(readFileSync(file, 'utf8'));
const self = new Map();
const ours = new Map();
let total = 0;
const name = (f) => `${f.functionName || '(anon)'} ${f.url.replace(/^.*\/(node_modules|dist|src)\//, '$1/')}:${f.lineNumber + 1}`;
const walk = (n, stack) => {
  const s = [...stack, n.callFrame];
  if (n.selfSize > 0) {
    total += n.selfSize;
    const k = name(n.callFrame);
    self.set(k, (self.get(k) ?? 0) + n.selfSize);
    const mine = [...s].reverse().find((f) => /\/dist\//.test(f.url));
    const o = mine ? name(mine) : '(none of ours)';
    ours.set(o, (ours.get(o) ?? 0) + n.selfSize);
  }
  for (const c of n.children) walk(c, s);
};
walk(head, []);
const show = (title, m) => {
  console.log(`${title} (bytes per post; total ${Math.round(total / posts)})`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${String(Math.round(v / posts)).padStart(8)}  ${k}`);
};
show('by allocating function', self);
show('by the innermost frame of ours', ours);
