// Baseline servers for the HTTP suites, each run as a child process (fork with --import tsx):
//   uws-bytes      bare uWebSockets.js answering every GET with the bytes in BENCH_BODY_FILE
//   fastify-bytes  Fastify doing the same
//   uws-contract   bare uWebSockets.js doing, per request, only what the API's contract asks of any
//                  server answering that read: the request's headers read (where a credential is),
//                  the peer address read (a system call: the anonymous reader's guest and limits go
//                  by address), a fresh X-Request-Id, and the project's answer headers
//                  (BENCH_HEADERS_FILE, captured from the project) before the same bytes
//   uws-contract-lean  the same work written the cheapest way uWS.js allows: the answer's headers
//                  as one preformatted buffer (one writeStatus call, no string to convert), the
//                  request id written as bytes into a reused buffer; the ceiling for a server
//                  that must do the contract's part (issue 47)
//   naive-write    node:http + postgres.js (16 connections), one autocommit INSERT per POST: what a
//                  user would write for a chat post (BENCH_DATABASE_URL, BENCH_SCHEMA)
//   naive-write-search  the same with searchable chat as a user would add it: a generated tsvector
//                  column with a GIN index, and an index on time
//   task-moves     the task board's four moves (post, claim, deliver, approve) as a user would
//                  write them with node:http + postgres.js (16 connections): one transaction per
//                  move, each statement awaited in turn, writing the rows the project's move writes
//                  (src/domain/task-moves.ts): the task row and its event row, the escrow account,
//                  both balances and the transfer row, the point rows, the submission and the
//                  inbox item of the member the move concerns. The caller is trusted from the
//                  Authorization header ("Bearer <member id>"): no credential is checked (the
//                  project checks one per request), so this baseline does less than the project.
// Each tells its parent its port over IPC.

import type { TemplatedApp } from 'uWebSockets.js';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { type PeerSource, peerAddress } from '../../src/transport/edge/peer.js';
import { taskMovesBaseline } from './task-moves-baseline.js';

const role = process.argv[2];
const JSON_TYPE = 'application/json; charset=utf-8';

async function uwsBytes(): Promise<void> {
  const { uWS } = await import('../../src/transport/uws-build.js');
  const body = readFileSync(process.env.BENCH_BODY_FILE as string);
  const app = uWS.App();
  app.get('/*', (res) => {
    res.cork(() => {
      res.writeHeader('content-type', JSON_TYPE).end(body);
    });
  });
  await listenUws(app);
}

async function listenUws(app: TemplatedApp): Promise<void> {
  const { uWS } = await import('../../src/transport/uws-build.js');
  app.listen('127.0.0.1', 0, (s) => {
    if (s) process.send?.({ port: uWS.us_socket_local_port(s) });
  });
}

async function uwsContract(): Promise<void> {
  const { uWS } = await import('../../src/transport/uws-build.js');
  const { randomUUID } = await import('node:crypto');
  const body = readFileSync(process.env.BENCH_BODY_FILE as string);
  const pairs = JSON.parse(readFileSync(process.env.BENCH_HEADERS_FILE as string, 'utf8')) as [string, string][];
  const app = uWS.App();
  app.get('/*', (res, req) => {
    readAsProject(res, req);
    res.cork(() => {
      res.writeStatus('200 OK');
      for (const [k, v] of pairs) res.writeHeader(k, v);
      res.writeHeader('x-request-id', randomUUID());
      res.end(body);
    });
  });
  await listenUws(app);
}

/** Reads a request's headers and peer address as the project reads them (uws.ts; the address as
 * src/transport/edge/peer.ts reads it), though the contract baselines look at neither: the same
 * work per request. */
function readAsProject(res: PeerSource, req: { forEach(cb: (k: string, v: string) => void): void }): void {
  const headers: Record<string, string> = {};
  req.forEach((k, v) => {
    headers[k] = v;
  });
  peerAddress(res);
}

async function uwsContractLean(): Promise<void> {
  const { uWS } = await import('../../src/transport/uws-build.js');
  const { uuidInto: requestIdInto, UUID_CHARS: REQUEST_ID_CHARS } = await import('../../src/domain/uuid.js');
  const body = readFileSync(process.env.BENCH_BODY_FILE as string);
  const pairs = JSON.parse(readFileSync(process.env.BENCH_HEADERS_FILE as string, 'utf8')) as [string, string][];
  const head = Buffer.from(['200 OK', ...pairs.map(([k, v]) => `${k}: ${v}`)].join('\r\n'), 'latin1');
  const idName = Buffer.from('x-request-id', 'latin1');
  const id = Buffer.alloc(REQUEST_ID_CHARS);
  const app = uWS.App();
  app.get('/*', (res, req) => {
    readAsProject(res, req);
    requestIdInto(id, 0);
    res.cork(() => {
      res.writeStatus(head);
      res.writeHeader(idName, id);
      res.end(body);
    });
  });
  await listenUws(app);
}

async function fastifyBytes(): Promise<void> {
  const Fastify = (await import('fastify')).default;
  const body = readFileSync(process.env.BENCH_BODY_FILE as string);
  const app = Fastify({ logger: false });
  app.get('/*', async (_req, reply) => reply.type(JSON_TYPE).send(body));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address() as { port: number };
  process.send?.({ port: addr.port });
}

async function naiveWrite(search = false): Promise<void> {
  const postgres = (await import('postgres')).default;
  const schema = process.env.BENCH_SCHEMA as string;
  const sql = postgres(process.env.BENCH_DATABASE_URL as string, { max: 16, onnotice: () => {} });
  await sql.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await sql.unsafe(`CREATE TABLE IF NOT EXISTS "${schema}".chat (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq bigserial UNIQUE, body text NOT NULL, author text, created_at timestamptz NOT NULL DEFAULT now())`);
  if (search) {
    await sql.unsafe(`ALTER TABLE "${schema}".chat ADD COLUMN IF NOT EXISTS search_tsv tsvector
      GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, body)) STORED`);
    await sql.unsafe(`CREATE INDEX IF NOT EXISTS chat_search_idx ON "${schema}".chat USING gin (search_tsv)`);
    await sql.unsafe(`CREATE INDEX IF NOT EXISTS chat_time_idx ON "${schema}".chat (created_at)`);
  }
  const insert = `INSERT INTO "${schema}".chat (body, author) VALUES ($1, $2) RETURNING id, seq::float8 AS seq, created_at`;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let msg: { body?: unknown };
      try {
        msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': JSON_TYPE }).end('{"success":false}');
        return;
      }
      if (typeof msg.body !== 'string' || msg.body.length < 1 || msg.body.length > 2000) {
        res.writeHead(400, { 'content-type': JSON_TYPE }).end('{"success":false}');
        return;
      }
      sql.unsafe(insert, [msg.body, req.headers.authorization ?? null]).then(
        ([row]) => {
          res.writeHead(200, { 'content-type': JSON_TYPE });
          res.end(JSON.stringify({ success: true, data: row, error: null, timestamp: new Date().toISOString() }));
        },
        () => res.writeHead(500).end(),
      );
    });
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as { port: number }).port }));
}

const roles: Record<string, () => Promise<void>> = {
  'task-moves': taskMovesBaseline,
  'uws-bytes': uwsBytes,
  'uws-contract': uwsContract,
  'uws-contract-lean': uwsContractLean,
  'fastify-bytes': fastifyBytes,
  'naive-write': () => naiveWrite(false),
  'naive-write-search': () => naiveWrite(true),
};
// A clean exit on SIGTERM, so that a baseline run under --cpu-prof writes its profile.
process.once('SIGTERM', () => process.exit(0));
const start = role ? roles[role] : undefined;
if (!start) throw new Error(`unknown role ${role}`);
await start();
