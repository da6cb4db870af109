// Private memory routes (spec 4 rows for /memory; DECISIONS.md "Memory"; DELETE added). Owner
// only: every route is member-only and reads the caller's own rows.

import { z } from 'zod';
import { NextCallSchema } from '../../domain/answers.js';
import * as memory from '../../domain/memory.js';
import { coded } from '../admission/validate.js';
import { ok, route } from '../runner/route.js';
import { paging } from '../runner/schemas.js';
import { member } from './identity.js';

// The key rule is the schema's (published as its pattern); a key that breaks it answers 400
// INVALID_KEY (src/transport/admission/validate.ts `coded`).
const memoryKey = coded(memory.MEMORY_KEY, memory.MEMORY_KEY_MESSAGE, 'INVALID_KEY');
const keyParam = z.object({ key: memoryKey });
const value = z.unknown().refine((v) => v !== undefined, 'value is required (any JSON value)');

const MemoryRecord = z.object({
  key: z.string(),
  value: z.unknown(),
  size_bytes: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
  content_trust: z.string(),
});
const Written = MemoryRecord.extend({ created: z.boolean() });

export const memoryRoutes = [
  route({
    method: 'GET',
    path: '/api/v1/memory',
    auth: 'member',
    summary: 'List your own memory keys (key, size_bytes, updated_at), in key order',
    tags: ['memory'],
    query: paging,
    response: z.object({
      memories: z.array(z.object({ key: z.string(), size_bytes: z.number(), updated_at: z.string() })),
      next_cursor: z.string().nullable(),
      content_trust: z.string(),
      usage: z.object({ keys: z.number(), bytes: z.number(), max_keys: z.number() }),
      next: z.array(NextCallSchema).optional().describe('when nothing is stored yet: how to store'),
    }),
    handler: async (req, ctx) => ok(await memory.list(ctx, member(req.caller), req.query.limit, req.query.before ?? null)),
  }),
  route({
    method: 'POST',
    path: '/api/v1/memory',
    auth: 'member',
    summary: 'Store a record (creates or overwrites the key)',
    tags: ['memory'],
    body: z.object({ key: memoryKey, value }),
    response: Written,
    errors: ['INVALID_KEY', 'VALUE_TOO_LARGE', 'MEMORY_FULL'],
    handler: async (req, ctx) => ok(await memory.put(ctx, member(req.caller), req.body.key, req.body.value)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/memory/{key}',
    auth: 'member',
    summary: 'Read one of your records',
    tags: ['memory'],
    params: keyParam,
    response: MemoryRecord,
    errors: ['INVALID_KEY', 'NOT_FOUND'],
    handler: async (req, ctx) => ok(await memory.get(ctx, member(req.caller), req.params.key)),
  }),
  route({
    method: 'POST',
    path: '/api/v1/memory/{key}',
    auth: 'member',
    summary: 'Overwrite one record (created when missing, within the key limit)',
    tags: ['memory'],
    params: keyParam,
    body: z.object({ value }),
    response: Written,
    errors: ['INVALID_KEY', 'VALUE_TOO_LARGE', 'MEMORY_FULL'],
    handler: async (req, ctx) => ok(await memory.put(ctx, member(req.caller), req.params.key, req.body.value)),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/memory/{key}',
    auth: 'member',
    summary: 'Delete one of your records',
    tags: ['memory'],
    params: keyParam,
    response: z.object({ key: z.string(), deleted: z.boolean() }),
    errors: ['INVALID_KEY', 'NOT_FOUND'],
    handler: async (req, ctx) => ok(await memory.remove(ctx, member(req.caller), req.params.key)),
  }),
];
