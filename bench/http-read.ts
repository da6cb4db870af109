// Read suite (not a test): GET /api/v1/chat (50 messages, about 16 KB) on the project against bare
// uWebSockets.js and Fastify serving the same bytes, anonymous and with a member token, in
// alternating rounds, each server in its own process, load from wrk (bench/lib/http-wrk.ts).
// Run alone: node --import tsx bench/http-read.ts [--seconds 4] [--rounds 3] [--connections 32]
// The project runs with RATE_LIMITS=off: with limits on, a single-address load generator is
// answered 429 after its budget, which measures the limiter, not the read path.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureWrk, medianRow, printTable, type Row, runWrk } from './lib/http-wrk.js';
import { type Proc, postJson, startCommons, startRole } from './lib/procs.js';

export interface ReadOptions {
  seconds?: number;
  rounds?: number;
  connections?: number;
}

interface Server {
  name: string;
  pid: number;
  url: string;
  stop: () => Promise<void>;
}

const server = (name: string, p: Proc): Server => ({ name, pid: p.pid, url: `http://127.0.0.1:${p.port}`, stop: () => p.stop() });

export async function run(opts: ReadOptions = {}): Promise<Row[]> {
  ensureWrk();
  const o = { seconds: opts.seconds ?? 4, rounds: opts.rounds ?? 3, connections: opts.connections ?? 32 };
  const project = server('commons', await startCommons({ env: { RATE_LIMITS: 'off' } }));
  const servers: Server[] = [project];
  try {
    const token = (await postJson(project.url, '/api/v1/ai/register', { name: 'Reader', accepted_principles: true })).data
      .api_token as string;
    // 50 messages of about 300 characters: the page of the table (about 16 KB).
    for (let i = 0; i < 50; i++) await postJson(project.url, '/api/v1/chat', { body: `message ${i} `.padEnd(170, 'x') }, token);
    const answer = await fetch(`${project.url}/api/v1/chat`);
    const body = Buffer.from(await answer.arrayBuffer());
    const file = join(tmpdir(), `commons-bench-page-${process.pid}.json`);
    writeFileSync(file, body);
    process.env.BENCH_BODY_FILE = file;
    // The anonymous answer's headers (the larger set: it announces the reader's guest), less those
    // uWS writes itself and the request id, which the baseline makes fresh per request.
    const own = new Set(['date', 'uwebsockets', 'content-length', 'x-request-id']);
    const headersFile = join(tmpdir(), `commons-bench-headers-${process.pid}.json`);
    writeFileSync(headersFile, JSON.stringify([...answer.headers].filter(([k]) => !own.has(k))));
    process.env.BENCH_HEADERS_FILE = headersFile;
    servers.push(server('bare uWS (same bytes)', await startRole('bench/lib/http-baselines.ts', 'uws-bytes')));
    servers.push(server('Fastify (same bytes)', await startRole('bench/lib/http-baselines.ts', 'fastify-bytes')));
    servers.push(server('bare uWS + contract', await startRole('bench/lib/http-baselines.ts', 'uws-contract')));
    servers.push(server('uWS + contract, lean', await startRole('bench/lib/http-baselines.ts', 'uws-contract-lean')));
    const scenarios: [string, Record<string, string>][] = [
      ['GET chat 50 (anonymous)', {}],
      ['GET chat 50 (member token)', { authorization: `Bearer ${token}` }],
    ];
    const got = new Map<string, Row[]>();
    for (let round = 0; round < o.rounds; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const [scenario, headers] of scenarios) {
        for (const s of order) {
          const r = await runWrk({
            url: `${s.url}/api/v1/chat`,
            seconds: o.seconds,
            connections: o.connections,
            headers,
            serverPid: s.pid,
          });
          const key = `${s.name}|${scenario}`;
          got.set(key, [...(got.get(key) ?? []), { suite: 'read', server: s.name, scenario, ...r }]);
        }
      }
    }
    const rows: Row[] = [];
    for (const [scenario] of scenarios) {
      const pick = (name: string) => medianRow(got.get(`${name}|${scenario}`) ?? []);
      const [mine, uws, fastify, contract, lean] = servers.map((s) => pick(s.name)) as [Row, Row, Row, Row, Row];
      mine.ratio = {
        vs_bare_uws: mine.rps / uws.rps,
        vs_fastify: mine.rps / fastify.rps,
        // The same per server CPU-second: robust when other work on the machine starves the servers.
        cpu_vs_bare_uws: mine.per_cpu_s / uws.per_cpu_s,
        cpu_vs_fastify: mine.per_cpu_s / fastify.per_cpu_s,
        cpu_vs_uws_contract: mine.per_cpu_s / contract.per_cpu_s,
        cpu_vs_uws_contract_lean: mine.per_cpu_s / lean.per_cpu_s,
      };
      // The ceiling of the stack for this read: what bare uWS reaches doing only the contract's part.
      contract.ratio = { cpu_vs_bare_uws: contract.per_cpu_s / uws.per_cpu_s, cpu_vs_fastify: contract.per_cpu_s / fastify.per_cpu_s };
      // The same written the cheapest way uWS.js allows (one preformatted header buffer, the
      // request id as bytes): what the project's lean read could reach at best.
      lean.ratio = { vs_bare_uws: lean.rps / uws.rps, cpu_vs_bare_uws: lean.per_cpu_s / uws.per_cpu_s };
      rows.push(mine, uws, fastify, contract, lean);
    }
    console.log(`page: ${body.length} bytes`);
    return rows;
  } finally {
    for (const s of servers) await s.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const arg = (n: string) => {
    const i = args.indexOf(`--${n}`);
    return i >= 0 ? Number(args[i + 1]) : undefined;
  };
  // The server runs as `npm start` runs it: from dist/, built first.
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  const rows = await run({
    ...(arg('seconds') ? { seconds: arg('seconds') } : {}),
    ...(arg('rounds') ? { rounds: arg('rounds') } : {}),
    ...(arg('connections') ? { connections: arg('connections') } : {}),
  });
  printTable(rows);
}
