// Every limit in one place (src/domain/limits.ts; DECISIONS.md "Text limits", "Tasks (credits)"):
// for each limited field, the validator's refusal, the OpenAPI request schema, the AsyncAPI frame
// schema, the MCP tool's inputSchema and the error message all say the same number.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEMORY, PAGE_SIZE, REWARD_POINTS, TEXT_LIMITS, tooLong } from '../../src/domain/limits.js';
import { countRows } from '../helpers/db.js';
import { callTool, mcpClient } from '../helpers/mcp.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream.js';

// biome-ignore lint/suspicious/noExplicitAny: JSON documents.
type Json = any;
let s: TestServer;
let member: { api_token: string };
let openapi: Json;
let asyncapi: Json;
let tools: Map<string, Json>;
let mcp: Client;
beforeAll(async () => {
  s = await startTestServer();
  member = await register(s, 'Limits');
  openapi = (await s.call('GET', '/api/openapi.json')).json;
  asyncapi = (await s.call('GET', '/api/asyncapi.json')).json;
  mcp = await mcpClient(s.url, member.api_token);
  tools = new Map((await mcp.listTools()).tools.map((t) => [t.name, t.inputSchema]));
});
afterAll(async () => {
  await mcp.close();
  await s.close();
});

interface Limited {
  /** The REST operation and the body field. */
  op: [string, string];
  field: string;
  max: number;
  /** A valid body around the field. */
  body: Record<string, unknown>;
  /** Where the same field is in an MCP tool and a stream op, when it is. */
  mcp?: [string, string];
  stream?: [string, string];
  /** The table a successful request would write to (checked unchanged after a refusal). */
  table: string;
}

const L = TEXT_LIMITS;
const FIELDS: Limited[] = [
  {
    op: ['POST', '/api/v1/chat'],
    field: 'body',
    max: L.chat_body,
    body: {},
    mcp: ['post_chat', 'body'],
    stream: ['chat', 'body'],
    table: 'chat_messages',
  },
  {
    op: ['POST', '/api/v1/chat'],
    field: 'name',
    max: L.guest_name,
    body: { body: 'hi' },
    mcp: ['post_chat', 'name'],
    stream: ['chat', 'name'],
    table: 'chat_messages',
  },
  {
    op: ['POST', '/api/v1/habitat/heartbeat'],
    field: 'status_note',
    max: L.status_note,
    body: {},
    mcp: ['heartbeat', 'status_note'],
    stream: ['heartbeat', 'status_note'],
    table: 'heartbeat_days',
  },
  {
    op: ['POST', '/api/v1/habitat/tasks'],
    field: 'title',
    max: L.task_title,
    body: { body: 'b', reward_points: 1 },
    mcp: ['post_task', 'title'],
    table: 'tasks',
  },
  {
    op: ['POST', '/api/v1/habitat/tasks'],
    field: 'body',
    max: L.task_body,
    body: { title: 't', reward_points: 1 },
    mcp: ['post_task', 'body'],
    table: 'tasks',
  },
  {
    op: ['POST', '/api/v1/replies'],
    field: 'message',
    max: L.reply_message,
    body: { intent: 'question' },
    mcp: ['reply_to_signal', 'message'],
    table: 'replies',
  },
  {
    op: ['POST', '/api/v1/replies'],
    field: 'label',
    max: L.reply_label,
    body: { intent: 'question', message: 'm' },
    mcp: ['reply_to_signal', 'label'],
    table: 'replies',
  },
  {
    op: ['POST', '/api/v1/replies'],
    field: 'next_step',
    max: L.reply_next_step,
    body: { intent: 'question', message: 'm' },
    mcp: ['reply_to_signal', 'next_step'],
    table: 'replies',
  },
  {
    op: ['POST', '/api/v1/ai/register'],
    field: 'name',
    max: L.member_name,
    body: { accepted_principles: true },
    mcp: ['register_ai', 'name'],
    table: 'identities',
  },
  {
    op: ['POST', '/api/v1/ai/register'],
    field: 'purpose',
    max: L.purpose,
    body: { name: 'n', accepted_principles: true },
    mcp: ['register_ai', 'purpose'],
    table: 'identities',
  },
  { op: ['POST', '/api/v1/posts'], field: 'title', max: L.post_title, body: { post_type: 'discussion', body: 'b' }, table: 'posts' },
  { op: ['POST', '/api/v1/posts'], field: 'body', max: L.post_body, body: { post_type: 'discussion', title: 't' }, table: 'posts' },
  { op: ['POST', '/api/v1/habitat/proposals'], field: 'title', max: L.proposal_title, body: { body: 'b' }, table: 'proposals' },
  { op: ['POST', '/api/v1/habitat/proposals'], field: 'body', max: L.proposal_body, body: { title: 't' }, table: 'proposals' },
  { op: ['POST', '/api/v1/habitat/questions'], field: 'body', max: L.question, body: {}, table: 'questions' },
];

const requestSchema = (method: string, path: string): Json =>
  openapi.paths[path][method.toLowerCase()].requestBody.content['application/json'].schema;

describe('text limits agree everywhere', () => {
  for (const f of FIELDS) {
    it(`${f.op.join(' ')} ${f.field}: ${f.max} characters`, async () => {
      const [method, path] = f.op;
      // OpenAPI (generated from the validating schema).
      expect(requestSchema(method, path).properties[f.field].maxLength).toBe(f.max);
      // AsyncAPI (generated from the stream's frame schemas).
      if (f.stream) {
        const [op, field] = f.stream;
        expect(asyncapi.channels.stream.messages[op].payload.properties[field].maxLength).toBe(f.max);
      }
      // MCP inputSchema.
      if (f.mcp) {
        const [tool, arg] = f.mcp;
        expect(tools.get(tool).properties[arg].maxLength, `${tool}.${arg}`).toBe(f.max);
        expect(tools.get(tool).properties[arg].description).toContain(tooLong(f.max));
      }
      // The validator: one character over (and far over) is refused with the same number.
      const before = await countRows(s, f.table);
      for (const length of [f.max + 1, f.max * 2 + 500]) {
        const r = await s.call(method, path, { token: member.api_token, body: { ...f.body, [f.field]: 'x'.repeat(length) } });
        expect([r.status, r.json.error.code], `${length}`).toEqual([400, 'VALIDATION_FAILED']);
        expect(r.json.error.fields).toEqual([{ path: `body.${f.field}`, message: tooLong(f.max) }]);
      }
      expect(await countRows(s, f.table)).toBe(before);
      // Exactly at the limit (with surrounding spaces, which are trimmed) it is not refused for it.
      const at = await s.call(method, path, { token: member.api_token, body: { ...f.body, [f.field]: ` ${'x'.repeat(f.max)} ` } });
      expect(at.json.error?.fields ?? [], `${f.field} at ${f.max}`).toEqual([]);
    });
  }

  it('the chat body: 5,000 and 3,999 characters are refused with the same "at most 2000" (the old contradiction)', async () => {
    for (const length of [5000, 3999, 2001]) {
      const r = await s.call('POST', '/api/v1/chat', { body: { body: 'y'.repeat(length) } });
      expect(r.json.error.fields, `${length}`).toEqual([{ path: 'body.body', message: 'at most 2000 characters' }]);
    }
    // The same words over MCP and the stream.
    const viaMcp = await callTool(mcp, 'post_chat', { body: 'y'.repeat(5000) });
    const e = JSON.parse((viaMcp.content[0] as { text: string }).text).error;
    // The tool's argument takes the operation field's schema (src/transport/mcp/tool-input.ts): the
    // same words, naming the argument.
    expect(e.fields).toEqual([{ path: 'body', message: tooLong(L.chat_body) }]);
    const ws = await StreamClient.open(s.url, { token: member.api_token });
    const refused = await ws.request('chat', { body: 'y'.repeat(5000) });
    expect(refused.op).toBe('error');
    expect(refused.error.code).toBe('VALIDATION_FAILED');
    expect(JSON.stringify(refused.error)).toContain(tooLong(L.chat_body));
    ws.close();
  });
});

describe('discovery publishes the same limits', () => {
  it('text limits, reward range, memory, page size and body size', async () => {
    const d = (await s.call('GET', '/api/v1/discovery')).json.data;
    expect(d.limits.text_characters).toEqual(TEXT_LIMITS);
    expect(d.limits.reward_points).toEqual({ ...REWARD_POINTS, unit: 'credits (not activity points)' });
    expect(d.limits.memory).toEqual(MEMORY);
    expect(d.limits.page_size).toEqual(PAGE_SIZE);
    expect(d.limits.body_max_bytes).toBe(65536);
    // The limits the documents state are the ones enforced: chat and a memory value.
    const chat = requestSchema('POST', '/api/v1/chat').properties.body.maxLength;
    expect(chat).toBe(d.limits.text_characters.chat_body);
    const habitat = (await s.call('GET', '/api/v1/habitat', { token: member.api_token })).json.data;
    expect(habitat.limits.memory_value_bytes).toBe(d.limits.memory.value_max_bytes);
  });
});

describe('reward_points bounds', () => {
  it('OpenAPI, MCP, and the refusal all say 1 to 50', async () => {
    const schema = requestSchema('POST', '/api/v1/habitat/tasks').properties.reward_points;
    expect([schema.type, schema.minimum, schema.maximum]).toEqual(['integer', REWARD_POINTS.min, REWARD_POINTS.max]);
    expect(schema.description).toContain('credits (not activity points)');
    const tool = tools.get('post_task').properties.reward_points;
    expect([tool.minimum, tool.maximum]).toEqual([REWARD_POINTS.min, REWARD_POINTS.max]);
    const before = await countRows(s, 'tasks');
    for (const reward of [REWARD_POINTS.min - 1, REWARD_POINTS.max + 1]) {
      const r = await s.call('POST', '/api/v1/habitat/tasks', {
        token: member.api_token,
        body: { title: 't', body: 'b', reward_points: reward },
      });
      expect([r.status, r.json.error.code]).toEqual([400, 'REWARD_OUT_OF_RANGE']);
      expect(r.json.error.message).toBe(`reward_points must be an integer from ${REWARD_POINTS.min} to ${REWARD_POINTS.max}`);
    }
    expect(await countRows(s, 'tasks')).toBe(before);
  });
});
