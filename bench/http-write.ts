// Write suite (not a test): POST /api/v1/chat, the project against the naive server a user would
// write (node:http + postgres.js, 16 connections, one autocommit INSERT per request) and the same
// with searchable chat as a user would add it (a generated tsvector column, its GIN index, an index
// on time), side by side in alternating rounds, then each at half of its own saturation for p99.
// For the project, its chat indexer's lag over each run's posts (issue 36; docs/chat.md
// "Indexing"): the commons_chat_index_lag_seconds histogram read before and after the run, after
// the backlog drained (the drain time reported too), so every post of the run is counted. The embedded default
// (PGlite) is compared with the figure measured before group commit (193 req/s).
// Run alone: node --import tsx bench/http-write.ts [--seconds 4] [--rounds 3] [--connections 16]
//            [--high-connections 256] [--backends postgres,pglite] [--database-url URL]
//            [--tasks-only]: the task moves alone, beside the same-work baseline
//            [--chat-only]: the chat posts alone (c=16 with half saturation, c=256), beside the naive servers
// Rate limits are off for the project here (RATE_LIMITS=off): the chat limit, not the write path,
// would otherwise set the figure.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { ensureWrk, printTable, type Row, runWrk } from './lib/http-wrk.js';
import { argValue, benchDatabaseUrl, startCommons } from './lib/procs.js';
import { register, taskMoves } from './lib/task-moves.js';
import { baseline, commitFloor, measure, running } from './lib/write-measure.js';

export interface WriteOptions {
  seconds?: number;
  rounds?: number;
  connections?: number;
  /** A second, higher concurrency for PostgreSQL, where many writers wait at once (0: skip). */
  highConnections?: number;
  backends?: ('postgres' | 'pglite')[];
  databaseUrl?: string;
  /** Only the task moves, against the same-work baseline (the chat and other writes skipped). */
  tasksOnly?: boolean;
  /** Only the chat posts against the naive servers (the other writes and the task moves skipped). */
  chatOnly?: boolean;
}

/** POST /api/v1/chat on the embedded default before group commit (issue 13's table). */
export const EMBEDDED_BEFORE_RPS = 193;

export async function run(opts: WriteOptions = {}): Promise<Row[]> {
  ensureWrk();
  const o: Required<WriteOptions> = {
    seconds: opts.seconds ?? 4,
    rounds: opts.rounds ?? 3,
    connections: opts.connections ?? 16,
    highConnections: opts.highConnections ?? 256,
    backends: opts.backends ?? ['postgres', 'pglite'],
    databaseUrl: benchDatabaseUrl(opts.databaseUrl),
    tasksOnly: opts.tasksOnly ?? false,
    chatOnly: opts.chatOnly ?? false,
  };
  const rows: Row[] = [];
  if (o.backends.includes('postgres')) {
    const schema = `bench_${randomBytes(5).toString('hex')}`;
    const project = running(
      'commons (postgres)',
      await startCommons({ databaseUrl: o.databaseUrl, env: { DATABASE_SCHEMA: schema, RATE_LIMITS: 'off' } }),
    );
    const naive = await baseline('naive node:http+pg', 'naive-write', {
      BENCH_DATABASE_URL: o.databaseUrl,
      BENCH_SCHEMA: `${schema}_naive`,
    });
    const searchable = await baseline('naive + search', 'naive-write-search', {
      BENCH_DATABASE_URL: o.databaseUrl,
      BENCH_SCHEMA: `${schema}_naive_search`,
    });
    // The same task moves as a user would write them (one transaction a move, same rows).
    const sameWork = {
      ...(await baseline('same-work node:http+pg', 'task-moves', { BENCH_DATABASE_URL: o.databaseUrl, BENCH_SCHEMA: `${schema}_tasks` })),
      schema: `${schema}_tasks`,
    };
    try {
      const token = (await register(project.url, 'Bench')).token;
      if (o.tasksOnly) {
        rows.push(
          ...(await taskMoves(
            project,
            { databaseUrl: o.databaseUrl, schema, seconds: o.seconds, connections: o.connections },
            undefined,
            sameWork,
          )),
        );
        return rows;
      }
      const got = await measure(
        'write',
        [
          { s: project, headers: { authorization: `Bearer ${token}` } },
          { s: naive, headers: { authorization: 'Bearer naive' } },
          { s: searchable, headers: { authorization: 'Bearer naive' } },
        ],
        o,
        true, // with the half-saturation p99
        true, // and PostgreSQL's CPU
      );
      const base = got.find((r) => r.server === naive.name && r.scenario.startsWith('saturation'));
      const baseSearch = got.find((r) => r.server === searchable.name && r.scenario.startsWith('saturation'));
      for (const r of got)
        if (r.server === project.name && r.scenario.startsWith('saturation') && base && baseSearch)
          r.ratio = { vs_naive: r.rps / base.rps, vs_naive_search: r.rps / baseSearch.rps };
      rows.push(...got);
      rows.push(await commitFloor(o.databaseUrl, `${schema}_floor`, o.seconds));
      if (o.highConnections > 0) {
        // Many writers at once: where grouping commits pays (the naive server keeps its 16 connections).
        const high = await measure(
          'write',
          [
            { s: project, headers: { authorization: `Bearer ${token}` } },
            { s: naive, headers: { authorization: 'Bearer naive' } },
            { s: searchable, headers: { authorization: 'Bearer naive' } },
          ],
          { ...o, connections: o.highConnections },
          false, // saturation only
          true, // with PostgreSQL's CPU
        );
        const hb = high.find((r) => r.server === naive.name);
        const hs = high.find((r) => r.server === searchable.name);
        for (const r of high)
          if (r.server === project.name && hb && hs) r.ratio = { vs_naive: r.rps / hb.rps, vs_naive_search: r.rps / hs.rps };
        rows.push(...high);
      }
      // The other hot writes, at saturation, against the same naive baseline (not grouped).
      const others: [string, string, string][] = o.chatOnly
        ? []
        : [
            ['heartbeat', '/api/v1/habitat/heartbeat', JSON.stringify({ status_note: 'benchmarking' })],
            ['memory set', '/api/v1/memory', JSON.stringify({ key: 'bench', value: { n: 1, note: 'a small value' } })],
          ];
      for (const [scenario, path, body] of others) {
        const r = await runWrk({
          url: `${project.url}${path}`,
          seconds: o.seconds,
          connections: o.connections,
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          serverPid: project.pid,
          database: true,
        });
        rows.push({
          suite: 'write',
          server: project.name,
          scenario: `${scenario} c=${o.connections}`,
          ...r,
          ...(base ? { ratio: { vs_naive: r.rps / base.rps } } : {}),
        });
      }
      // Task moves (post, claim, deliver, approve), each over distinct tasks.
      if (!o.chatOnly)
        rows.push(
          ...(await taskMoves(
            project,
            { databaseUrl: o.databaseUrl, schema, seconds: o.seconds, connections: o.connections },
            base?.rps,
            sameWork,
          )),
        );
    } finally {
      await project.stop();
      await naive.stop();
      await searchable.stop();
      await sameWork.stop();
      const sql = postgres(o.databaseUrl, { max: 1, onnotice: () => {} });
      await sql.unsafe(
        `DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_naive" CASCADE; DROP SCHEMA IF EXISTS "${schema}_naive_search" CASCADE; DROP SCHEMA IF EXISTS "${schema}_tasks" CASCADE`,
      );
      await sql.end();
    }
  }
  if (o.backends.includes('pglite') && !o.tasksOnly) {
    const project = running('commons (embedded)', await startCommons({ env: { RATE_LIMITS: 'off' } }));
    try {
      const token = (await register(project.url, 'Bench')).token;
      const got = await measure('write', [{ s: project, headers: { authorization: `Bearer ${token}` } }], o);
      for (const r of got) if (r.scenario.startsWith('saturation')) r.ratio = { vs_before: r.rps / EMBEDDED_BEFORE_RPS };
      rows.push(...got);
    } finally {
      await project.stop();
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // The server runs as `npm start` runs it: from dist/, built first.
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  const args = process.argv.slice(2);
  const arg = (n: string) => argValue(args, `--${n}`);
  const rows = await run({
    ...(arg('seconds') ? { seconds: Number(arg('seconds')) } : {}),
    ...(arg('rounds') ? { rounds: Number(arg('rounds')) } : {}),
    ...(arg('connections') ? { connections: Number(arg('connections')) } : {}),
    ...(arg('high-connections') ? { highConnections: Number(arg('high-connections')) } : {}),
    ...(arg('backends') ? { backends: (arg('backends') as string).split(',') as ('postgres' | 'pglite')[] } : {}),
    ...(arg('database-url') ? { databaseUrl: arg('database-url') as string } : {}),
    tasksOnly: args.includes('--tasks-only'),
    chatOnly: args.includes('--chat-only'),
  });
  printTable(rows);
}
