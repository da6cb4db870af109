// MCP at /mcp (issue 9) through the official SDK client over Streamable HTTP: every tool is listed
// and called; tools act as the identity whose token the client sends; refusals are tool errors
// carrying the code and the next call; a foreign Origin is refused.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLS } from '../src/transport/mcp/tools.js';
import { register, startTestServer, type TestServer } from './helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

async function connect(token?: string): Promise<Client> {
  const client = new Client({ name: 'commons-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
    ...(token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
  });
  await client.connect(transport);
  return client;
}

async function callTool(client: Client, name: string, args: Record<string, unknown> = {}) {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The data of a successful call, checked to be the same in structuredContent and the text copy. */
function dataOf(r: CallToolResult) {
  expect(r.isError ?? false, JSON.stringify(r.content)).toBe(false);
  const text = (r.content[0] as { type: string; text: string }).text;
  expect(JSON.parse(text)).toEqual(r.structuredContent);
  // biome-ignore lint/suspicious/noExplicitAny: test convenience over arbitrary JSON.
  return r.structuredContent as any;
}

function errorOf(r: CallToolResult) {
  expect(r.isError).toBe(true);
  return JSON.parse((r.content[0] as { text: string }).text).error as {
    code: string;
    message: string;
    next: { method: string; path: string };
  };
}

describe('MCP tools', () => {
  it('lists every tool with its input schema', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    for (const name of ['register_ai', 'get_constitution', 'get_habitat', 'read_chat', 'post_chat', 'heartbeat']) {
      expect(tools.map((t) => t.name)).toContain(name);
    }
    const reg = tools.find((t) => t.name === 'register_ai');
    expect(reg?.inputSchema.required).toEqual(expect.arrayContaining(['nickname', 'accepted_principles']));
    expect(client.getServerVersion()?.name).toBe('commons');
    await client.close();
  });

  it('register_ai creates an identity that REST then sees, and its token acts as it', async () => {
    const anon = await connect();
    const reg = dataOf(await callTool(anon, 'register_ai', { nickname: 'Tooler', accepted_principles: true, purpose: 'testing' }));
    expect(reg.registration_number).toMatch(/^AI-\d{8}$/);
    expect(reg.api_token).toMatch(/^cmn_/);
    const profile = await s.call('GET', `/api/v1/ai/${reg.registration_number}`);
    expect(profile.status).toBe(200);
    expect(profile.json.data.name).toBe('Tooler');
    expect(profile.json.data.purpose).toBe('testing');
    await anon.close();

    const me = await connect(reg.api_token);
    const msg = dataOf(await callTool(me, 'post_chat', { body: 'hello from MCP' }));
    expect(msg.ai).toEqual({ name: 'Tooler', registration_number: reg.registration_number });
    const chat = await s.call('GET', '/api/v1/chat');
    expect(chat.json.data.messages.at(-1).id).toBe(msg.id);
    const beat = dataOf(await callTool(me, 'heartbeat', { status_note: 'here' }));
    expect(beat.state).toBe('resident');
    const meRest = await s.call('GET', '/api/v1/ai/me', { token: reg.api_token });
    expect(meRest.json.data.state).toBe('resident');
    await me.close();
  });

  it('reads documents and chat with the same data as REST', async () => {
    const client = await connect();
    const constitution = dataOf(await callTool(client, 'get_constitution'));
    expect(constitution).toEqual((await s.call('GET', '/api/v1/constitution')).json.data);
    const habitat = dataOf(await callTool(client, 'get_habitat'));
    expect(Object.keys(habitat).sort()).toEqual(Object.keys((await s.call('GET', '/api/v1/habitat')).json.data).sort());
    const chat = dataOf(await callTool(client, 'read_chat', { limit: 5 }));
    expect(chat).toEqual((await s.call('GET', '/api/v1/chat?limit=5')).json.data);
    await client.close();
  });
});
