// Each dependency fault answers 503 UNAVAILABLE with Retry-After, never 500 (DECISIONS.md "Idempotent
// writes", "Reliability promises"): the errors are the real ones the real libraries throw (a
// PostgreSQL lock timeout, postgres.js's connect timeout against a server that never answers, a
// connection reset mid-query, ioredis's retries exhausted against a Redis that is gone), each
// classified by the one mapping every transport uses. A plain bug stays 500 INTERNAL.
import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { afterAll, expect, it } from 'vitest';
import { toCommonsError } from '../../src/domain/errors.js';
import { STATUS_OF } from '../../src/transport/runner/envelope.js';
import { freePort } from './servers.js';

const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) s.close();
});

/** A TCP server on 127.0.0.1 that does `onConnection` with each socket. */
async function tcp(onConnection: (s: Socket) => void): Promise<number> {
  const srv = createServer(onConnection);
  servers.push(srv);
  await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', ok));
  return (srv.address() as { port: number }).port;
}

async function thrown(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a fault');
}

function expect503(err: unknown): void {
  const e = toCommonsError(err);
  expect(e.code, String(err)).toBe('UNAVAILABLE');
  expect(STATUS_OF[e.code]).toBe(503);
  expect(e.retryAfterS).toBe(1);
}

it('connect timeout (postgres.js CONNECT_TIMEOUT against a server that never answers): 503', async () => {
  const silent: Socket[] = [];
  const port = await tcp((s) => silent.push(s));
  const sql = postgres({ host: '127.0.0.1', port, max: 1, connect_timeout: 1, onnotice: () => {} });
  const err = await thrown(sql`SELECT 1`);
  expect((err as { code?: string }).code).toBe('CONNECT_TIMEOUT');
  expect503(err);
  for (const s of silent) s.destroy();
  await sql.end({ timeout: 1 });
});

it('connection reset mid-conversation (ECONNRESET / CONNECTION_CLOSED): 503', async () => {
  const port = await tcp((s) => s.once('data', () => s.resetAndDestroy()));
  const sql = postgres({ host: '127.0.0.1', port, max: 1, connect_timeout: 5, onnotice: () => {} });
  const err = await thrown(sql`SELECT 1`);
  expect(['ECONNRESET', 'CONNECTION_CLOSED', 'CONNECTION_DESTROYED']).toContain((err as { code?: string }).code);
  expect503(err);
  await sql.end({ timeout: 1 });
});

it('Redis retries exhausted (ioredis MaxRetriesPerRequestError) and a closed connection: 503', async () => {
  const port = await freePort();
  const r = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, retryStrategy: () => 10, lazyConnect: true });
  r.on('error', () => {});
  const err = await thrown(r.set('k', 'v'));
  expect((err as Error).name).toBe('MaxRetriesPerRequestError');
  expect503(err);
  r.disconnect();
  const offline = new Redis({ port, host: '127.0.0.1', enableOfflineQueue: false, lazyConnect: true });
  offline.on('error', () => {});
  const closed = await thrown(offline.set('k', 'v'));
  expect503(closed);
  offline.disconnect();
});

it.runIf(Boolean(process.env.DATABASE_URL))('lock timeout after a stall (PostgreSQL 55P03): 503', async () => {
  const url = process.env.DATABASE_URL as string;
  const holder = postgres(url, { max: 1, onnotice: () => {} });
  const waiter = postgres(url, { max: 1, onnotice: () => {}, connection: { lock_timeout: 200 } });
  const table = `fault_lock_${process.pid}`;
  await holder.unsafe(`CREATE TABLE IF NOT EXISTS public.${table} (x int)`);
  let release = () => {};
  const held = new Promise<void>((ok) => {
    release = ok;
  });
  let locked = () => {};
  const isLocked = new Promise<void>((ok) => {
    locked = ok;
  });
  const tx = holder.begin(async (t) => {
    await t.unsafe(`LOCK TABLE public.${table} IN ACCESS EXCLUSIVE MODE`);
    locked();
    await held;
  });
  await isLocked;
  const err = await thrown(waiter.unsafe(`SELECT * FROM public.${table}`));
  expect((err as { code?: string }).code).toBe('55P03');
  expect503(err);
  release();
  await tx;
  await holder.unsafe(`DROP TABLE public.${table}`);
  await Promise.all([holder.end(), waiter.end()]);
});

it('a wrapped outage (an error whose cause is one) is 503; a plain bug stays 500 INTERNAL', () => {
  const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
  expect503(new Error('the commit failed', { cause: reset }));
  expect503(new AggregateError([new Error('x'), reset]));
  const bug = toCommonsError(new TypeError("Cannot read properties of undefined (reading 'id')"));
  expect(bug.code).toBe('INTERNAL');
  expect(STATUS_OF[bug.code]).toBe(500);
});
