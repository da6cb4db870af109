// Row cost (not a test): what one chat post costs PostgreSQL's backend in CPU, against the naive
// server's row and a plain row, each written the way it is written in the write suite, on one
// connection with durable commits (synchronous_commit on), so the backend's CPU per row is read
// from /proc without the server or the load generator around it. It shows where the write
// suite's PostgreSQL CPU per post goes (BENCHMARKS.md "Why PostgreSQL chat writes do not reach
// 3x the naive server").
//   node --import tsx bench/row-cost.ts [--seconds 3] [--group 16] [--database-url postgres://...]
import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { indexNext, insertMessages, type NewChatRow } from '../src/store/chat.js';
import { migrate } from '../src/store/migrate.js';
import { argValue, benchDatabaseUrl, cpuSeconds, table } from './lib/procs.js';

const BODY = 'a benchmark message of ordinary length, about as long as a short chat line';

export type RowCost = {
  row: string;
  rows_per_statement: number;
  rows_per_s: number;
  backend_us_per_row: number;
};

/** Runs `step` (which writes `rows` rows) for `seconds` on the backend `pid`; its CPU per row. */
async function measure(row: string, rows: number, pid: number, seconds: number, step: () => Promise<unknown>): Promise<RowCost> {
  for (let i = 0; i < 50; i++) await step(); // prepared statements, caches, the first pages
  const c0 = cpuSeconds(pid);
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < seconds * 1000) {
    await step();
    n += rows;
  }
  const secs = (performance.now() - t0) / 1000;
  const used = cpuSeconds(pid) - c0;
  return { row, rows_per_statement: rows, rows_per_s: Math.round(n / secs), backend_us_per_row: Number(((1e6 * used) / n).toFixed(1)) };
}

export async function run(opts: { seconds?: number; group?: number; databaseUrl?: string } = {}): Promise<RowCost[]> {
  const seconds = opts.seconds ?? 3;
  const group = opts.group ?? 16;
  const url = benchDatabaseUrl(opts.databaseUrl);
  const schema = `bench_rows_${randomBytes(4).toString('hex')}`;
  // One connection, so every statement runs on the backend whose CPU is read.
  const sql = postgres(url, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
  try {
    await sql.unsafe(`CREATE SCHEMA "${schema}"`);
    await migrate(sql);
    await sql.unsafe(`CREATE TABLE naive (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), seq bigserial UNIQUE, body text NOT NULL,
      author text, created_at timestamptz NOT NULL DEFAULT now())`);
    await sql.unsafe('CREATE TABLE plain (id bigserial PRIMARY KEY, body text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
    const [{ pid } = { pid: 0 }] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
    const bodies = Array.from({ length: group }, () => BODY);
    const posts = (): NewChatRow[] =>
      bodies.map((body) => ({ id: randomUUID(), body, authorId: null, guestNumber: 1, guestLabel: 'Bench', at: new Date(), mentions: [] }));
    return [
      await measure("the naive server's row, one per statement (its request)", 1, pid, seconds, () =>
        sql.unsafe('INSERT INTO naive (body, author) VALUES ($1, $2) RETURNING id, seq::float8 AS seq, created_at', [BODY, 'naive'], {
          prepare: true,
        }),
      ),
      await measure(`a plain row (id, body, time), ${group} per statement`, group, pid, seconds, () =>
        sql.unsafe('INSERT INTO plain (body) SELECT unnest($1::text[])', [bodies], { prepare: true }),
      ),
      await measure(`a chat post (chat_append, a guest author), ${group} per statement`, group, pid, seconds, () =>
        insertMessages(sql, posts()),
      ),
      // What the posts above derive, done after their commits by the indexer (issue 36): the search
      // columns, the point and score; the backlog the posts left outlasts the measurement.
      await measure(`its indexing (chat_index_next), ${group} per statement`, group, pid, seconds, () =>
        indexNext(sql, group, 'http://bench/api/v1/chat'),
      ),
    ];
  } finally {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await sql.end();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const a = process.argv.slice(2);
  const rows = await run({
    seconds: Number(argValue(a, '--seconds') ?? 3),
    group: Number(argValue(a, '--group') ?? 16),
    databaseUrl: benchDatabaseUrl(argValue(a, '--database-url')),
  });
  console.log(table(rows));
}
