// Baseline servers for the HTTP suites, each run as a child process (fork with --import tsx):
//   uws-bytes      bare uWebSockets.js answering every GET with the bytes in BENCH_BODY_FILE
//   fastify-bytes  Fastify doing the same
//   uws-contract   bare uWebSockets.js doing, per request, only what the API's contract asks of any
//                  server answering that read: the request's headers read (where a credential is),
//                  the peer address read (a system call: the anonymous reader's guest and limits go
//                  by address), a fresh X-Request-Id, and the project's answer headers
//                  (BENCH_HEADERS_FILE, captured from the project) before the same bytes
//   naive-write    node:http + postgres.js (16 connections), one autocommit INSERT per POST: what a
//                  user would write for a chat post (BENCH_DATABASE_URL, BENCH_SCHEMA)
//   naive-write-search  the same with searchable chat as a user would add it: a generated tsvector
//                  column with a GIN index, and an index on time
// Each tells its parent its port over IPC.

import type { TemplatedApp } from 'uWebSockets.js';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

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
    // Read as the project reads them (uws.ts), though nothing here looks at them.
    const headers: Record<string, string> = {};
    req.forEach((k, v) => {
      headers[k] = v;
    });
    Buffer.from(res.getRemoteAddressAsText()).toString();
    res.cork(() => {
      res.writeStatus('200 OK');
      for (const [k, v] of pairs) res.writeHeader(k, v);
      res.writeHeader('x-request-id', randomUUID());
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
  'uws-bytes': uwsBytes,
  'uws-contract': uwsContract,
  'fastify-bytes': fastifyBytes,
  'naive-write': () => naiveWrite(false),
  'naive-write-search': () => naiveWrite(true),
};
const start = role ? roles[role] : undefined;
if (!start) throw new Error(`unknown role ${role}`);
await start();
