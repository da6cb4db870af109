// Private key/value memory (spec 2.6, 8; DECISIONS.md "Memory"). Only the owner's token reaches
// these functions; values are never logged and never appear in a public document.

import { GroupCommit } from '../store/group-commit.js';
import type { IdentityRow } from '../store/identities.js';
import * as store from '../store/memory.js';
import { UNTRUSTED } from './caller.js';
import { fail, isOutage } from './errors.js';
import { MEMORY_LIMITS } from './habitat-docs.js';
import type { Ctx } from './ports.js';

/** The memory key rule, stated once: the request schemas publish it (pattern) and check it
 * (src/transport/runner/schemas.ts `memoryKey`); callers that reach the domain another way meet it here. */
export const MEMORY_KEY = /^[a-z0-9._:-]{1,80}$/;
export const MEMORY_KEY_MESSAGE = `memory keys match ${MEMORY_LIMITS.key_format} (a-z 0-9 . _ : - and at most 80 characters)`;

export function checkKey(key: string): void {
  if (!MEMORY_KEY.test(key)) fail('INVALID_KEY', MEMORY_KEY_MESSAGE, { fields: [{ path: 'key', message: 'invalid key' }] });
}

/** The size of a value is the UTF-8 byte length of its JSON encoding. */
export function encodeValue(value: unknown): { json: string; size: number } {
  const json = JSON.stringify(value);
  const size = Buffer.byteLength(json, 'utf8');
  if (size > MEMORY_LIMITS.memory_value_bytes) {
    fail('VALUE_TOO_LARGE', `the value is ${size} bytes as JSON; at most ${MEMORY_LIMITS.memory_value_bytes}`, {
      fields: [{ path: 'value', message: `${size} bytes` }],
    });
  }
  return { json, size };
}

const view = (r: store.MemoryRow) => ({
  key: r.key,
  value: r.value,
  size_bytes: r.size_bytes,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
  content_trust: UNTRUSTED,
});

export async function put(ctx: Ctx, owner: IdentityRow, key: string, value: unknown) {
  checkKey(key);
  const { json, size } = encodeValue(value);
  const write: store.NewMemory = { owner: owner.id, key, json, size, at: ctx.clock.now() };
  const puts = ctx.services.memoryPuts;
  const r = puts
    ? await puts.submit(write)
    : ((await store.putMemories(ctx.sql, [write], MEMORY_LIMITS.memory_keys_per_ai))[0] as store.PutResult);
  if (r.kind === 'full') {
    return fail('MEMORY_FULL', `you hold ${MEMORY_LIMITS.memory_keys_per_ai} keys; delete one or overwrite an existing key`);
  }
  return { ...view(r.row), created: r.created };
}

/** Starts this node's grouped memory writes (the composition root calls it once): concurrent
 * writes share one statement and one commit, in submission order (sql/026_memory_put_many.sql). */
export function openMemoryWrites(ctx: Ctx): () => void {
  const puts = new GroupCommit(
    (batch: store.NewMemory[]) => store.putMemories(ctx.sql, batch, MEMORY_LIMITS.memory_keys_per_ai),
    500,
    undefined,
    isOutage,
  );
  ctx.services.memoryPuts = puts;
  // Its stop, for its starter (src/app.ts): later writes go alone.
  return () => {
    if (ctx.services.memoryPuts === puts) ctx.services.memoryPuts = null;
  };
}

export async function get(ctx: Ctx, owner: IdentityRow, key: string) {
  checkKey(key);
  const row = await store.getMemory(ctx.sql, owner.id, key);
  if (!row) return fail('NOT_FOUND', `no memory key ${key}`, { next: { method: 'GET', path: '/api/v1/memory' } });
  return view(row);
}

export async function remove(ctx: Ctx, owner: IdentityRow, key: string) {
  checkKey(key);
  if (!(await store.deleteMemory(ctx.sql, owner.id, key))) {
    return fail('NOT_FOUND', `no memory key ${key}`, { next: { method: 'GET', path: '/api/v1/memory' } });
  }
  return { key, deleted: true };
}

export async function list(ctx: Ctx, owner: IdentityRow, limit: number, after: string | null) {
  const [rows, usage] = await Promise.all([store.listMemory(ctx.sql, owner.id, limit + 1, after), store.memoryUsage(ctx.sql, owner.id)]);
  const page = rows.slice(0, limit);
  return {
    memories: page.map((r) => ({ key: r.key, size_bytes: r.size_bytes, updated_at: r.updated_at.toISOString() })),
    next_cursor: rows.length > limit ? (page[page.length - 1]?.key ?? null) : null,
    content_trust: UNTRUSTED,
    usage: { keys: usage.keys, bytes: usage.bytes, max_keys: MEMORY_LIMITS.memory_keys_per_ai },
    // An empty memory says how to fill it.
    ...(page.length === 0 && after === null
      ? {
          next: [
            {
              method: 'POST',
              path: '/api/v1/memory',
              doc: `nothing stored yet: {"key": "notes.today", "value": <any JSON, at most ${MEMORY_LIMITS.memory_value_bytes} bytes>}`,
            },
          ],
        }
      : {}),
  };
}
