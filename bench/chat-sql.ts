// What chat posts cost PostgreSQL (not a test; issue 47, docs/bench-chat-47.md): groups of G posts
// appended as the node sends them (src/store/chat.ts insertMessages: chat_append, autocommit), then
// indexed in steps of S messages (chat_index_next), one after the other on one connection, in a
// schema of its own, timed by the backend's own CPU time (/proc/<pid>/schedstat), which other load
// on the machine moves far less than wall time. Prints PostgreSQL CPU per post for the append
// (commit included) and for the indexing, and the watermark's own cost per read.
// Run: node --import tsx bench/chat-sql.ts --database-url URL [--group 8] [--step 50] [--posts 4000]
//        [--schema NAME] [file.sql ...]   (SQL files run after the migrations: another definition
//        of a function, an index dropped..., to compare with, side by side in alternating runs)
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { migrate } from '../src/store/migrate.js';
import { argValue, benchDatabaseUrl } from './lib/procs.js';
import { BODY } from './lib/write-measure.js';

const args = process.argv.slice(2);
const url = benchDatabaseUrl(argValue(args, '--database-url'));
const G = Number(argValue(args, '--group') ?? 8);
const S = Number(argValue(args, '--step') ?? 50);
const N = Number(argValue(args, '--posts') ?? 4000);
const schema = argValue(args, '--schema') ?? `bench_chatsql_${randomBytes(4).toString('hex')}`;
const files = args.filter((a, i) => a.endsWith('.sql') && !args[i - 1]?.startsWith('--'));
const body = (JSON.parse(BODY) as { body: string }).body;

const admin = postgres(url, { max: 1, onnotice: () => {} });
await admin.unsafe(`CREATE SCHEMA "${schema}"`);
const sql = postgres(url, { max: 1, connection: { search_path: schema }, onnotice: () => {} });
try {
  await migrate(sql);
  for (const f of files) await sql.unsafe(readFileSync(f, 'utf8'));
  const token = randomBytes(32);
  const [m] = await sql<{ id: number }[]>`INSERT INTO identities (id, name, zho_level, token_hash, invite_code)
    VALUES (nextval('member_number_seq'), 'Poster', 'ZHO-2', ${token}, ${randomBytes(8).toString('hex')}) RETURNING id::int`;
  const author = (m as { id: number }).id;
  const c = await sql.reserve();
  const [{ pid }] = (await c.unsafe('SELECT pg_backend_pid() AS pid')) as unknown as [{ pid: number }];
  const cpuUs = () => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e3;
  const append = (g: number) =>
    c.unsafe(
      `SELECT id, seq::float8 AS seq FROM chat_append($1::uuid[], $2::text[], $3::bigint[], $4::text[], $5::bigint[],
         $6::text[], $7::timestamptz[], $8::bigint[], $9::text[], $10::text[])`,
      [
        Array.from({ length: g }, () => randomUUID()),
        Array(g).fill(body),
        Array(g).fill(author),
        Array(g).fill(token.toString('hex')),
        Array(g).fill(null),
        Array(g).fill(null),
        Array(g).fill(new Date().toISOString()),
        [],
        [],
        Array(g).fill(null),
      ] as never[],
      { prepare: true },
    );
  const index = () =>
    c.unsafe('SELECT upto, indexed FROM chat_index_next($1::integer, $2::text)', [500, 'http://x/api/v1/chat'], { prepare: true });
  // Warm-up: plans cached, the first pages read.
  for (let i = 0; i < 20; i++) await append(G);
  await index();
  let appendUs = 0;
  let indexUs = 0;
  let posts = 0;
  let steps = 0;
  while (posts < N) {
    let t = cpuUs();
    for (let k = 0; k < S; k += G) {
      await append(G);
      posts += G;
    }
    appendUs += cpuUs() - t;
    t = cpuUs();
    await index();
    indexUs += cpuUs() - t;
    steps++;
  }
  let t = cpuUs();
  for (let i = 0; i < 500; i++) await c.unsafe('SELECT chat_watermark()', [], { prepare: true });
  const wmUs = (cpuUs() - t) / 500;
  t = cpuUs();
  for (let i = 0; i < 500; i++) await c.unsafe('SELECT 1', [], { prepare: true });
  const emptyUs = (cpuUs() - t) / 500;
  console.log(
    JSON.stringify({
      group: G,
      step: Math.round(posts / steps),
      posts,
      append_us_per_post: Number((appendUs / posts).toFixed(1)),
      append_us_per_group: Number(((appendUs / posts) * G).toFixed(0)),
      index_us_per_post: Number((indexUs / posts).toFixed(1)),
      index_us_per_step: Number((indexUs / steps).toFixed(0)),
      watermark_us: Number(wmUs.toFixed(1)),
      empty_statement_us: Number(emptyUs.toFixed(1)),
      load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    }),
  );
  c.release();
} finally {
  await sql.end();
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
}
