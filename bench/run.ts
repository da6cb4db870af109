// `npm run bench`: every benchmark suite against its baselines, side by side, in one run, on this
// machine (DESIGN.md "Benchmarks"). Each suite starts its servers as separate processes, alternates
// rounds between them, and reports ratios; this prints every table and writes the whole run as
// JSON to bench/results/run-<time>.json (the figures BENCHMARKS.md quotes).
// Options: --quick (fewer and shorter rounds, a smoke run), --only fanout,read,write,rows,start,search
//          --tasks-only (the write suite's task moves alone, beside their same-work baseline)
//          --database-url postgres://... (the PostgreSQL the write suite's real-PostgreSQL half
//          and the search suite's second half run on, each in a schema of its own; default:
//          BENCH_DATABASE_URL, else the local server at 127.0.0.1:5432). The search suite runs on
//          the embedded database, then on that PostgreSQL, and reports each; the start suite
//          starts the service on each.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fanoutOptions, runFanout } from './fanout.js';
import { printTable } from './lib/http-wrk.js';
import { argValue, benchDatabaseUrl, table } from './lib/procs.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const only = (() => {
  const i = args.indexOf('--only');
  return i >= 0 ? new Set((args[i + 1] as string).split(',')) : null;
})();
const wants = (suite: string) => !only || only.has(suite);

export interface SuiteReport {
  suite: string;
  command: string;
  summary: string;
  data: unknown;
}

export type Suite = (opts: { quick: boolean; args: string[] }) => Promise<SuiteReport>;

const suites: [string, () => Promise<Suite>][] = [
  [
    'fanout',
    async () =>
      async ({ quick: q, args: a }) => {
        const opts = fanoutOptions(a);
        if (q) Object.assign(opts, { seconds: 2, rounds: 1, idle: 2000 });
        const r = await runFanout(opts);
        return { suite: 'fanout', command: 'node --import tsx bench/fanout.ts', summary: r.summary, data: r };
      },
  ],
  [
    'read',
    async () => {
      const { run } = await import('./http-read.js');
      return async ({ quick: q }) => {
        const rows = await run(q ? { seconds: 2, rounds: 1 } : {});
        printTable(rows);
        return { suite: 'read', command: 'node --import tsx bench/http-read.ts', summary: '', data: rows };
      };
    },
  ],
  [
    'write',
    async () => {
      const { run } = await import('./http-write.js');
      return async ({ quick: q, args: a }) => {
        const databaseUrl = argValue(a, '--database-url');
        const rows = await run({
          ...(q ? { seconds: 2, rounds: 1 } : {}),
          ...(databaseUrl ? { databaseUrl } : {}),
          tasksOnly: a.includes('--tasks-only'),
        });
        printTable(rows);
        return { suite: 'write', command: 'node --import tsx bench/http-write.ts', summary: '', data: rows };
      };
    },
  ],
  [
    'rows',
    async () => {
      const { run } = await import('./row-cost.js');
      return async ({ quick: q, args: a }) => {
        const databaseUrl = benchDatabaseUrl(argValue(a, '--database-url'));
        const rows = await run({ seconds: q ? 1 : 3, databaseUrl });
        return { suite: 'rows', command: 'node --import tsx bench/row-cost.ts', summary: table(rows), data: rows };
      };
    },
  ],
  [
    'start',
    async () => {
      const { run, summarize } = await import('./start.js');
      return async ({ quick: q, args: a }) => {
        const databaseUrl = benchDatabaseUrl(argValue(a, '--database-url'));
        const rows = await run({ rounds: q ? 1 : 5, databaseUrl, settleS: q ? 5 : 20 });
        return { suite: 'start', command: 'node --import tsx bench/start.ts', summary: summarize(rows), data: rows };
      };
    },
  ],
  [
    'search',
    async () => {
      const { runBoth } = await import('./search.js');
      return async ({ quick: q, args: a }) => {
        const databaseUrl = benchDatabaseUrl(argValue(a, '--database-url'));
        const r = await runBoth({ ...(q ? { messages: 20_000, requests: 100 } : {}), databaseUrl });
        return {
          suite: 'search',
          command: 'node --import tsx bench/search.ts, then with --database-url',
          summary: r.summary,
          data: r.rows,
        };
      };
    },
  ],
];

async function main(): Promise<void> {
  console.log('building dist/ (the servers run as `npm start` runs them)');
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  const started = new Date();
  const machine = { cores: cpus().length, model: cpus()[0]?.model, node: process.version, loadavg_at_start: loadavg() };
  console.log(
    `machine: ${machine.cores} cores (${machine.model}), node ${machine.node}, load ${machine.loadavg_at_start.map((l) => l.toFixed(2)).join(' ')}`,
  );
  const reports: SuiteReport[] = [];
  for (const [name, load] of suites) {
    if (!wants(name)) continue;
    console.log(`\n== ${name}`);
    const suite = await load();
    const report = await suite({ quick, args });
    console.log(report.summary);
    reports.push(report);
  }
  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/run-${started.toISOString().replace(/[:.]/g, '-')}.json`;
  writeFileSync(file, JSON.stringify({ command: `npm run bench -- ${args.join(' ')}`.trim(), started, machine, reports }, null, 2));
  console.log(`\nwrote ${file}`);
  process.exit(0);
}

await main();
