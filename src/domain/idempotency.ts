// Idempotent writes (DECISIONS.md "Idempotent writes"): a write sent with a key runs at most once
// per caller scope and key for 24 h. The write runs inside one transaction that the runner opens
// here and hands to the use case as its context's `sql` (a use case's own transactions become
// savepoints of it, and the node's grouped writers are bypassed, so every statement of the write
// is in it); the first answer is stored in that same transaction, so a crash keeps both or
// neither, and stored sealed under the key, which is kept only as its SHA-256
// (./sealed-answer.ts): only a repeat that presents the key can read it. What the write publishes
// on the bus is held and sent after the commit. A repeat with the same fingerprint gets the stored
// answer (on any node, after a restart); with another fingerprint 422 IDEMPOTENCY_MISMATCH; while
// the first is running (a per-node set, ctx.services.keysRunning, and a transaction-scoped
// advisory lock across nodes) 409 IDEMPOTENCY_IN_FLIGHT.
import type { Sql, TransactionSql } from 'postgres';
import * as store from '../store/idempotency.js';
import { holdingConnection } from '../store/one-connection.js';
import { CommonsError, type ErrorCode, type FieldIssue, fail, type NextCall } from './errors.js';
import type { BusMessage, Ctx } from './ports.js';
import { keyHashOf, openAnswer, sealAnswer } from './sealed-answer.js';

export const KEY_TTL_MS = 24 * 3600 * 1000;

export interface Keyed {
  /** Who: `m:<member id>`, `g:<guest number>` or `a:<address>` for a call without a credential. */
  scope: string;
  key: string;
  /** sha256 of what the request asks (method, path, parameters and body). */
  fingerprint: Buffer;
}

/** An answer as stored and replayed: a success's data, or a refusal's error. */
export type StoredBody =
  | { data: unknown }
  | { error: { code: ErrorCode; message: string; next: NextCall; fields?: FieldIssue[]; retry_after_s?: number; data?: unknown } };

export type KeyedOutcome<R> = { replayed: false; result: R } | { replayed: true; status: number; body: StoredBody };

/** What the runner tells about the work: the answer to store for a result, and for a thrown error
 * the status to store (a refusal), or null when it is not an answer to keep (an outage, a bug:
 * nothing is kept and a retry runs again). */
export interface KeyedAnswers<R> {
  ofResult(r: R): { status: number; data: unknown };
  statusOfRefusal(err: unknown): number | null;
}

function inFlight(): never {
  return fail('IDEMPOTENCY_IN_FLIGHT', 'a request with this Idempotency-Key is still running; repeat it after Retry-After for its answer', {
    retryAfterS: 1,
  });
}

function replay<R>(prior: store.StoredAnswer, k: Keyed): KeyedOutcome<R> {
  if (!prior.fingerprint.equals(k.fingerprint)) {
    return fail(
      'IDEMPOTENCY_MISMATCH',
      'this Idempotency-Key was already used with another request (method, path or body); nothing was done',
    );
  }
  const body = openAnswer({ ...k, status: prior.status }, prior.sealed) as StoredBody;
  return { replayed: true, status: prior.status, body };
}

/** Runs `work` at most once for the key (see the header). */
export async function runKeyed<R>(ctx: Ctx, k: Keyed, answers: KeyedAnswers<R>, work: (c: Ctx) => Promise<R>): Promise<KeyedOutcome<R>> {
  // This node's running keys (shared by every view of its context).
  const set = ctx.services.keysRunning;
  const keyHash = keyHashOf(k.key);
  const id = `${k.scope}\n${keyHash.toString('base64')}`;
  if (set.has(id)) inFlight();
  set.add(id);
  try {
    const now = ctx.clock.now();
    const since = new Date(now.getTime() - KEY_TTL_MS);
    const prior = await store.findAnswer(ctx.sql, k.scope, keyHash, since);
    if (prior) return replay(prior, k);
    const held: BusMessage[] = [];
    // Every statement of the write goes through `tx` (../store/one-connection.ts refuses others).
    const out = await ctx.sql.begin((tx) =>
      holdingConnection(async () => {
        if (!(await store.tryHold(tx, k.scope, keyHash))) inFlight();
        const again = await store.findAnswer(tx, k.scope, keyHash, since);
        if (again) return { again, result: undefined, refusal: undefined };
        const view = inTransaction(ctx, tx, held);
        let result: R | undefined;
        let refusal: unknown;
        let stored: { status: number; body: StoredBody };
        try {
          result = (await tx.savepoint(() => work(view))) as R;
          const a = answers.ofResult(result);
          stored = { status: a.status, body: { data: a.data } };
        } catch (err) {
          const status = answers.statusOfRefusal(err);
          if (status === null || !(err instanceof CommonsError)) throw err;
          refusal = err;
          held.length = 0;
          stored = { status, body: { error: errorOf(err) } };
        }
        const sealed = sealAnswer({ ...k, status: stored.status }, stored.body);
        await store.saveAnswer(tx, {
          scope: k.scope,
          keyHash,
          fingerprint: k.fingerprint,
          status: stored.status,
          sealed,
          at: now,
          expiredBefore: since,
        });
        return { again: null, result, refusal };
      }),
    );
    if (out.again) return replay(out.again, k);
    // Committed: now what the write published goes out (it may be lost; replay fills the gap).
    for (const m of held) await ctx.bus.publish(m);
    if (out.refusal !== undefined) throw out.refusal;
    return { replayed: false, result: out.result as R };
  } finally {
    set.delete(id);
  }
}

/** A stored refusal as the error it was. */
export function refusalOf(body: Extract<StoredBody, { error: unknown }>): CommonsError {
  const e = body.error;
  return new CommonsError(e.code, e.message, {
    next: e.next,
    ...(e.fields ? { fields: e.fields } : {}),
    ...(e.retry_after_s !== undefined ? { retryAfterS: e.retry_after_s } : {}),
    ...(e.data !== undefined ? { data: e.data } : {}),
  });
}

function errorOf(err: CommonsError): Extract<StoredBody, { error: unknown }>['error'] {
  return {
    code: err.code,
    message: err.message,
    next: err.next,
    ...(err.fields ? { fields: err.fields } : {}),
    ...(err.retryAfterS !== undefined ? { retry_after_s: err.retryAfterS } : {}),
    ...(err.data !== undefined ? { data: err.data } : {}),
  };
}

/** The context a keyed write runs in: its statements in `tx` (a use case's own transaction is a
 * savepoint of it), the node's grouped writers bypassed (they commit on their own), and bus
 * messages held for after the commit. */
function inTransaction(ctx: Ctx, tx: TransactionSql, held: BusMessage[]): Ctx {
  const sql = new Proxy(tx, {
    get(target, prop, receiver) {
      if (prop === 'begin') return (fn: (t: TransactionSql) => unknown) => target.savepoint(fn as never);
      return Reflect.get(target, prop, receiver);
    },
  }) as unknown as Sql;
  const bus = {
    nodeId: ctx.bus.nodeId,
    publish: async (m: BusMessage) => {
      held.push(m);
    },
    subscribe: ctx.bus.subscribe.bind(ctx.bus),
    close: async () => {},
  };
  return {
    ...ctx,
    sql,
    bus,
    services: { ...ctx.services, chatPosts: null, memoryPuts: null, taskWrites: null, tokenChecks: null },
  };
}

/** Forgets answers past their 24 h; returns how many. */
export function reapKeys(ctx: Ctx): Promise<number> {
  return store.reapAnswers(ctx.sql, new Date(ctx.clock.now().getTime() - KEY_TTL_MS));
}
