// Runs after `npm ci` / `npm install` (package.json "postinstall"). postgres.js 3.4.9 writes to a
// socket that a lost connection has already set to null (porsager/postgres#1154, #1208; fix
// proposed in #1209, not released): the TypeError is thrown from a setImmediate callback, where
// nothing can catch it, so a transaction in flight when PostgreSQL dies takes the whole process
// down. This applies the proposed guard: the write fails the waiting queries with
// CONNECTION_CLOSED (the service answers 503) and the process lives on. Idempotent; it fails
// loudly when the code it patches has changed (a new postgres.js: check whether it is fixed).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const FILES = ['src', 'cjs/src', 'cf/src'].map((d) => `node_modules/postgres/${d}/connection.js`);
const MARK = '/* commons: guard nextWrite */';
const BEFORE = /function nextWrite\(fn\) \{\n(\s+)const x = socket\.write\(chunk, fn\)/;
const AFTER = (indent) =>
  `function nextWrite(fn) {\n${indent}${MARK}\n${indent}if (!socket) {\n${indent}  nextWriteTimer !== null && clearImmediate(nextWriteTimer)\n${indent}  chunk = nextWriteTimer = null\n${indent}  error(Errors.connection('CONNECTION_CLOSED', options))\n${indent}  return false\n${indent}}\n${indent}const x = socket.write(chunk, fn)`;

let patched = 0;
for (const f of FILES) {
  if (!existsSync(f)) continue;
  const text = readFileSync(f, 'utf8');
  if (text.includes(MARK)) continue;
  const m = BEFORE.exec(text);
  if (!m) {
    console.error(`patch-postgres: ${f} no longer has the unguarded nextWrite; check whether postgres.js fixed #1208`);
    process.exit(1);
  }
  writeFileSync(f, text.replace(BEFORE, AFTER(m[1])));
  patched++;
}
if (patched) console.log(`patch-postgres: guarded nextWrite in ${patched} file(s)`);
