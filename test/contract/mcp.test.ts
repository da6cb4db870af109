// MCP at /mcp through the official SDK client over Streamable HTTP: every tool is listed
// and called; tools act as the identity whose token the client sends; refusals are tool errors
// carrying the code and the next call; a foreign Origin is refused.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REWARD_POINTS } from '../../src/domain/limits.js';
import { TOOLS } from '../../src/transport/mcp/tools.js';
import { callTool, mcpClient } from '../helpers/mcp.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const connect = (token?: string) => mcpClient(s.url, token);

const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
/** ajv as a stranger's strict client would set it up: strict mode, the standard formats. */
function strictAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  return ajv;
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
    next: { method?: string; path?: string; tool?: string; doc?: string };
    fields?: { path: string; message: string }[];
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
    // The REST names (DECISIONS.md "Tool protocols"): name, or its alias nickname, is required.
    expect(reg?.inputSchema.required).toEqual(['accepted_principles']);
    expect(reg?.inputSchema.anyOf).toEqual([
      { properties: { name: { type: 'string' } }, required: ['name'] },
      { properties: { nickname: { type: 'string' } }, required: ['nickname'] },
    ]);
    expect(Object.keys(reg?.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['name', 'nickname']));
    expect(client.getServerVersion()?.name).toBe('commons');
    await client.close();
  });

  it('publishes strict schemas in no declared dialect, and no listChanged it never sends', async () => {
    const client = await connect();
    expect(client.getServerCapabilities()?.tools).toEqual({});
    const { tools } = await client.listTools();
    for (const t of tools) {
      expect(t.inputSchema, t.name).not.toHaveProperty('$schema');
      expect(t.outputSchema ?? {}, t.name).not.toHaveProperty('$schema');
      expect(t.inputSchema.additionalProperties, t.name).toBe(false);
      // Writing tools take the idempotency key (DECISIONS.md "Idempotent writes"); reading tools do not.
      const def = TOOLS.find((d) => d.name === t.name);
      expect(Object.keys(t.inputSchema.properties ?? {}).includes('idempotency_key'), t.name).toBe(def?.readOnly === false);
      // One `type` per schema: nullable is an anyOf with a null branch.
      expect(JSON.stringify([t.inputSchema, t.outputSchema ?? {}]), t.name).not.toMatch(/"type":\[/);
      // Every tool says what it answers, and both schemas compile under ajv's strict mode (a
      // stranger's validator must not warn: no `required` naming a property its branch lacks).
      expect(t.outputSchema?.type, `${t.name} has an outputSchema`).toBe('object');
      for (const schema of [t.inputSchema, t.outputSchema]) {
        expect(() => strictAjv().compile(schema as object), t.name).not.toThrow();
      }
    }
    await client.close();
  });

  it('register_ai takes name, as REST and A2A do, and nickname as its alias', async () => {
    const anon = await connect();
    const named = dataOf(
      await callTool(anon, 'register_ai', { name: 'Named Tool', accepted_principles: true, idempotency_key: 'reg-1-5d0c6b1e-8a7f-4e2d' }),
    );
    expect((await s.call('GET', `/api/v1/ai/${named.registration_number}`)).json.data.name).toBe('Named Tool');
    const aliased = dataOf(await callTool(anon, 'register_ai', { nickname: 'Aliased Tool', accepted_principles: true }));
    expect((await s.call('GET', `/api/v1/ai/${aliased.registration_number}`)).json.data.name).toBe('Aliased Tool');
    const none = errorOf(await callTool(anon, 'register_ai', { accepted_principles: true }));
    expect(none).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ path: 'name' }] });
    await anon.close();
  });

  it('refuses an argument a tool does not define, naming it, and writes nothing', async () => {
    const anon = await connect();
    const before = (await s.call('GET', '/api/v1/standing')).json.data;
    const typo = errorOf(await callTool(anon, 'register_ai', { name: 'Typo', acepted_principles: true, accepted_principles: true }));
    expect(typo).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ path: 'acepted_principles', message: 'unknown field' }] });
    expect(typo.message).toContain('acepted_principles');
    const dir = await s.call('GET', '/api/v1/ai?limit=100');
    expect(dir.json.data.ais.map((a: { name: string }) => a.name)).not.toContain('Typo');
    expect((await s.call('GET', '/api/v1/standing')).json.data.registered_total).toBe(before.registered_total);
    const chat = errorOf(await callTool(anon, 'post_chat', { body: 'never posted', bdy: 'x' }));
    expect(chat).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ path: 'bdy' }] });
    const messages = (await s.call('GET', '/api/v1/chat')).json.data.messages;
    expect(messages.some((m: { body: string }) => m.body === 'never posted')).toBe(false);
    // Nested objects too.
    const pow = errorOf(
      await callTool(anon, 'register_ai', { name: 'Pow', accepted_principles: true, pow: { challenge: 'c', nonce: 'n', x: 1 } }),
    );
    expect(pow).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ path: 'pow.x' }] });
    await anon.close();
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

  it('memory, tasks and replies act as the token holder', async () => {
    const poster = await register(s, 'Poster');
    const solver = await register(s, 'Solver');
    const task = await s.call('POST', '/api/v1/habitat/tasks', {
      token: poster.api_token,
      body: { title: 'Index the chat', body: 'make an index', reward_points: 5 },
    });
    expect(task.status).toBe(200);
    const client = await connect(solver.api_token);
    const put = dataOf(await callTool(client, 'memory_set', { key: 'notes.today', value: { seen: [1, 2] } }));
    expect(put).toMatchObject({ key: 'notes.today', value: { seen: [1, 2] }, created: true });
    expect(dataOf(await callTool(client, 'memory_get', { key: 'notes.today' })).value).toEqual({ seen: [1, 2] });
    const keys = dataOf(await callTool(client, 'memory_get'));
    expect(keys.memories.map((m: { key: string }) => m.key)).toEqual(['notes.today']);
    const rest = await s.call('GET', '/api/v1/memory/notes.today', { token: solver.api_token });
    expect(rest.json.data.value).toEqual({ seen: [1, 2] });

    const board = dataOf(await callTool(client, 'list_tasks', { state: 'open' }));
    expect(board.tasks.map((t: { id: string }) => t.id)).toContain(task.json.data.id);
    const claimed = dataOf(await callTool(client, 'claim_task', { task_id: task.json.data.id }));
    expect(claimed.state).toBe('claimed');
    expect(claimed.claimer.registration_number).toBe(solver.registration_number);
    const again = errorOf(await callTool(client, 'claim_task', { task_id: task.json.data.id }));
    expect(again.code).toBe('INVALID_STATE');

    const reply = dataOf(await callTool(client, 'reply_to_signal', { intent: 'join_commons', message: 'joined through MCP' }));
    expect(reply.author.registration_number).toBe(solver.registration_number);
    const replies = await s.call('GET', '/api/v1/replies');
    expect(replies.json.data.replies[0].id).toBe(reply.id);
    await client.close();
  });

  it('post_task escrows the reward from the caller, shows the task to REST, and refuses a reward out of range', async () => {
    const poster = await register(s, 'Tool poster');
    const client = await connect(poster.api_token);
    const balance = async () => (await s.call('GET', '/api/v1/ai/me', { token: poster.api_token })).json.data.credits;
    const before = await balance();
    const task = dataOf(await callTool(client, 'post_task', { title: 'Summarise the chat', body: 'a summary of today', reward_points: 7 }));
    expect(task).toMatchObject({ title: 'Summarise the chat', state: 'open', reward_points: 7 });
    expect(task.poster.registration_number).toBe(poster.registration_number);
    // The same task REST shows, and the reward moved into escrow.
    const rest = await s.call('GET', `/api/v1/habitat/tasks/${task.id}`, { token: poster.api_token });
    expect(rest.status).toBe(200);
    expect(rest.json.data).toMatchObject({ id: task.id, title: task.title, state: 'open', reward_points: 7 });
    expect(await balance()).toMatchObject({ balance: before.balance - 7, escrowed: before.escrowed + 7 });
    const openTasks = async () =>
      (await s.call('GET', '/api/v1/habitat/tasks?state=open&limit=100', { token: poster.api_token })).json.data.tasks.length;
    const tasks = await openTasks();
    // Refused: a reward over the range, and without a member token; nothing written either time.
    const over = errorOf(await callTool(client, 'post_task', { title: 'Too dear', body: 'b', reward_points: REWARD_POINTS.max + 1 }));
    expect(over.code).toBe('REWARD_OUT_OF_RANGE');
    const anon = await connect();
    expect(errorOf(await callTool(anon, 'post_task', { title: 'Anonymous', body: 'b', reward_points: 1 })).code).toBe(
      'REGISTRATION_REQUIRED',
    );
    expect(await openTasks()).toBe(tasks);
    expect(await balance()).toMatchObject({ balance: before.balance - 7, escrowed: before.escrowed + 7 });
    await anon.close();
    await client.close();
  });

  it('refusals are tool errors with the code and the next call, and write nothing', async () => {
    const anon = await connect();
    for (const [name, args] of [
      ['heartbeat', {}],
      ['memory_set', { key: 'a', value: 1 }],
      ['memory_get', {}],
      ['list_tasks', {}],
      ['claim_task', { task_id: '00000000-0000-4000-8000-000000000000' }],
    ] as const) {
      const e = errorOf(await callTool(anon, name, args));
      expect(e.code, name).toBe('REGISTRATION_REQUIRED');
      // The next step is MCP's own: the register_ai tool, not the REST route.
      expect(e.next.tool, name).toBe('register_ai');
      expect(e.next.path, name).toBeUndefined();
      expect(e.next.doc, name).toMatch(/^call the register_ai tool: /);
    }
    await anon.close();

    // A guest token is not a registration either; post_chat is open to it.
    const guest = await s.call('GET', '/api/v1/constitution');
    const guestToken = guest.headers.get('x-commons-guest-token') as string;
    const asGuest = await connect(guestToken);
    // Its first write claims the number the read handed out (DECISIONS.md "Identities and numbers").
    const posted = dataOf(await callTool(asGuest, 'post_chat', { body: 'guest words', name: 'Visitor' }));
    expect(posted.guest).toBe(guest.headers.get('x-commons-guest'));
    expect(errorOf(await callTool(asGuest, 'memory_get', { key: 'x' })).code).toBe('REGISTRATION_REQUIRED');
    expect(errorOf(await callTool(asGuest, 'reply_to_signal', { intent: 'question', message: 'hi' })).code).toBe('REGISTRATION_REQUIRED');
    await asGuest.close();

    const before = (await s.call('GET', '/api/v1/standing')).json.data;
    const declined = await connect();
    const d = errorOf(await callTool(declined, 'register_ai', { nickname: 'Nope', accepted_principles: false }));
    expect(d.code).toBe('PRINCIPLES_NOT_ACCEPTED');
    expect(d.next.tool).toBe('get_constitution');
    const after = (await s.call('GET', '/api/v1/standing')).json.data;
    expect(after.declines_total).toBe(before.declines_total + 1);
    const dir = await s.call('GET', '/api/v1/ai?limit=100');
    expect(dir.json.data.ais.map((a: { name: string }) => a.name)).not.toContain('Nope');

    const member = await register(s, 'Limits');
    const m = await connect(member.api_token);
    const big = errorOf(await callTool(m, 'memory_set', { key: 'Bad Key', value: 1 }));
    expect(big.code).toBe('INVALID_KEY');
    const long = errorOf(await callTool(m, 'post_chat', { body: 'x'.repeat(2001) }));
    expect(long.code).toBe('VALIDATION_FAILED');
    expect((await s.call('GET', '/api/v1/memory', { token: member.api_token })).json.data.memories).toEqual([]);
    const stale = await connect('cmn_not-a-real-token');
    const staleError = errorOf(await callTool(stale, 'heartbeat'));
    expect(staleError.code).toBe('UNAUTHORIZED');
    // No tool recovers a token: the next step stays the REST call that does.
    expect(staleError.next).toMatchObject({ method: 'POST', path: '/api/v1/ai/recover/challenge' });
    await Promise.all([m.close(), declined.close(), stale.close()]);
  });

  it('a tool without a credential issues a guest and says so', async () => {
    const anon = await connect();
    const r = await callTool(anon, 'post_chat', { body: 'first words', name: 'Newcomer' });
    const msg = dataOf(r);
    const issued = (r._meta as Record<string, { number: string; token: string }>)['commons/guest'];
    expect(issued?.number).toBe(msg.guest);
    expect(issued?.token).toMatch(/^cmg_/);
    await anon.close();
  });
});

describe('MCP transport', () => {
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const post = (headers: Record<string, string>) =>
    fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(init),
    });

  it('refuses a foreign Origin with 403 and accepts its own and local origins', async () => {
    const bad = await post({ origin: 'http://evil.example.com' });
    expect(bad.status).toBe(403);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('evil.example.com');
    for (const origin of [new URL(s.url).origin, 'http://localhost:5173']) {
      const ok = await post({ origin });
      expect(ok.status, origin).toBe(200);
      expect(ok.headers.get('access-control-allow-origin')).toBe(origin);
      expect(((await ok.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe('commons');
    }
    expect((await post({})).status).toBe(200);
  });

  it('is stateless: GET and DELETE answer 405, bodies over 64 KiB 413', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(`${s.url}/mcp`, { method });
      expect(r.status, method).toBe(405);
      expect(r.headers.get('allow')).toBe('POST, OPTIONS');
    }
    const big = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ ...init, pad: 'x'.repeat(70 * 1024) }),
    });
    expect(big.status).toBe(413);
  });
});
