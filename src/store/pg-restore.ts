// pg_restore into PostgreSQL, also from client tools newer than the server (docs/operations.md
// "Backup and restore"). The image ships PostgreSQL 17's client tools; pg_restore 17 opens every
// restore with `SET transaction_timeout = 0;`, a setting servers before 17 do not have, and the
// restore stops there. Same major (or a newer server): pg_restore straight into the database, as
// PostgreSQL documents. An older server: pg_restore writes the script, the session settings of its
// prelude that the server does not know are left out (nothing else is touched: a row of data that
// reads like a SET stays), and psql runs it in one transaction, stopping at the first error.
import { execFile, spawn } from 'node:child_process';
import { Transform, type TransformCallback } from 'node:stream';
import { promisify } from 'node:util';
import postgres from 'postgres';

const exec = promisify(execFile);

/** Runs a PostgreSQL client tool; its failure names what the tool said, never the command line
 * (which holds DATABASE_URL and so perhaps a password). */
export async function runTool(tool: string, args: string[]): Promise<string> {
  try {
    return (await exec(tool, args)).stdout;
  } catch (err) {
    const e = err as { stderr?: string; code?: string | number };
    throw new Error(`${tool} failed: ${e.stderr?.trim() || `exit ${e.code}`}`);
  }
}

const ARGS = ['--no-owner', '--no-privileges'];

export async function pgRestore(url: string, file: string): Promise<void> {
  const clientMajor = Number(/(\d+)/.exec(await runTool('pg_restore', ['--version']))?.[1]);
  const server = postgres(url, { max: 1, onnotice: () => {} });
  let serverMajor: number;
  let known: Set<string>;
  try {
    const [v] = await server<{ v: number }[]>`SELECT current_setting('server_version_num')::int / 10000 AS v`;
    serverMajor = v?.v ?? 0;
    known = new Set((await server<{ name: string }[]>`SELECT name FROM pg_settings`).map((r) => r.name));
  } finally {
    await server.end();
  }
  if (!(clientMajor > serverMajor)) {
    await runTool('pg_restore', [...ARGS, '--exit-on-error', '--single-transaction', '--dbname', url, file]);
    return;
  }
  await scriptInto(url, file, known);
}

/** The script's opening: SET lines, set_config calls, comments, blank lines, its BEGIN and
 * psql's `\restrict` (client tools 17.6+), up to the first
 * statement of another kind. Only there is a SET of a setting the server lacks left out. */
export function preludeFilter(known: ReadonlySet<string>): Transform {
  let inPrelude = true;
  let rest: Buffer = Buffer.alloc(0);
  const keep = (line: string): boolean => {
    const set = /^SET ([a-z_]+) = .*;$/.exec(line);
    if (set) return known.has(set[1] as string);
    if (line === '' || line === 'BEGIN;' || line.startsWith('--') || line.startsWith('\\restrict ')) return true;
    if (line.startsWith('SELECT pg_catalog.set_config(')) return true;
    inPrelude = false;
    return true;
  };
  // Lines are cut at the newline byte (never inside a UTF-8 sequence); after the prelude the
  // bytes pass as they came.
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      if (!inPrelude) return done(null, chunk);
      let buf = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
      const out: Buffer[] = [];
      let nl = buf.indexOf(10);
      while (inPrelude && nl >= 0) {
        const line = buf.subarray(0, nl + 1);
        if (keep(line.toString('utf8', 0, nl))) out.push(line);
        buf = buf.subarray(nl + 1);
        nl = buf.indexOf(10);
      }
      if (inPrelude) rest = Buffer.from(buf);
      else {
        out.push(buf);
        rest = Buffer.alloc(0);
      }
      done(null, Buffer.concat(out));
    },
    flush(done: TransformCallback) {
      done(null, rest.length === 0 || keep(rest.toString('utf8')) ? rest : Buffer.alloc(0));
    },
  });
}

function scriptInto(url: string, file: string, known: ReadonlySet<string>): Promise<void> {
  return new Promise((ok, ko) => {
    const dump = spawn('pg_restore', [...ARGS, '--single-transaction', '--file=-', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    const psql = spawn('psql', ['--no-psqlrc', '--quiet', '--set=ON_ERROR_STOP=1', '--dbname', url], {
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    const errs = { pg_restore: '', psql: '' };
    dump.stderr.on('data', (b: Buffer) => {
      errs.pg_restore += b.toString();
    });
    psql.stderr.on('data', (b: Buffer) => {
      errs.psql += b.toString();
    });
    dump.stdout.pipe(preludeFilter(known)).pipe(psql.stdin);
    // psql stopping first (an error) closes its stdin under pg_restore's output: not our failure.
    psql.stdin.on('error', () => {});
    let left = 2;
    const codes: Record<string, number | null> = {};
    const done = (tool: 'pg_restore' | 'psql') => (code: number | null) => {
      codes[tool] = code;
      if (--left > 0) return;
      if (codes.psql !== 0) return ko(new Error(`psql failed: ${errs.psql.trim() || `exit ${codes.psql}`}`));
      if (codes.pg_restore !== 0) return ko(new Error(`pg_restore failed: ${errs.pg_restore.trim() || `exit ${codes.pg_restore}`}`));
      ok();
    };
    dump.on('error', ko);
    psql.on('error', ko);
    dump.on('close', done('pg_restore'));
    psql.on('close', done('psql'));
  });
}
