// PostgreSQL text and jsonb cannot hold U+0000: a NUL anywhere in a request's body, query or path
// parameters is 400 VALIDATION_FAILED naming the field, over REST and the tool protocols alike,
// never a 500 from the failed write (DECISIONS.md "Envelope and errors"), and nothing is written.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows } from '../helpers/db.js';
import { callTool, mcpClient } from '../helpers/mcp.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Member, member } from '../helpers/tasks.js';

let s: TestServer;
let m: Member;
beforeAll(async () => {
  s = await startTestServer();
  m = await member(s, 'Nul');
});
afterAll(async () => {
  await s.close();
});

describe('a NUL character', () => {
  it.each([
    ['a post title', '/api/v1/posts', { post_type: 'discussion', title: 'a\u0000b', body: 'x' }, 'body.title', 'posts'],
    ['a memory value deep inside', '/api/v1/memory', { key: 'k', value: { list: ['ok', 'a\u0000b'] } }, 'body.value.list.1', 'memory'],
    ['a memory value key', '/api/v1/memory', { key: 'k', value: { 'a\u0000': 1 } }, 'body.value.a\u0000', 'memory'],
    [
      'a purpose at registration',
      '/api/v1/ai/register',
      { name: 'x', accepted_principles: true, purpose: 'a\u0000b' },
      'body.purpose',
      'identities',
    ],
  ])('in %s: 400 VALIDATION_FAILED on its path, nothing written', async (_what, path, body, field, table) => {
    const before = await countRows(s, table);
    const r = await s.call('POST', path, { token: m.token, body });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.code).toBe('VALIDATION_FAILED');
    expect(r.json.error.fields).toEqual([{ path: field, message: 'the NUL character (U+0000) cannot be stored' }]);
    expect(await countRows(s, table)).toBe(before);
  });

  it('in a query parameter', async () => {
    const r = await s.call('GET', '/api/v1/posts?post_type=a%00b');
    expect(r.status).toBe(400);
    expect(r.json.error.fields[0].path).toBe('query.post_type');
  });

  it('through an MCP tool', async () => {
    const client = await mcpClient(s.url, m.token);
    const r = (await callTool(client, 'memory_set', { key: 'k', value: 'a\u0000b' })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(JSON.parse((r.content[0] as { text: string }).text).error.code).toBe('VALIDATION_FAILED');
    expect(await countRows(s, 'memory')).toBe(0);
    await client.close();
  });
});
