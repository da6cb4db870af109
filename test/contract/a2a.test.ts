// A2A: the agent card (v1.0 shape with a 0.3.0 interface, Cache-Control, ETag) and the
// JSON-RPC endpoint, driven by @a2a-js/sdk's own clients: the 1.0 client built from the card URL,
// the 0.3 JSON-RPC transport on the card's top-level url, and raw JSON-RPC for both versions.
import { randomUUID } from 'node:crypto';
import { type Message, Role } from '@a2a-js/sdk';
import { AgentCardResolver, Client, ClientFactory } from '@a2a-js/sdk/client';
import { isLegacyAgentCard, LegacyJsonRpcTransport, parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const userMessage = (parts: Message['parts']): Message => ({
  messageId: randomUUID(),
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const text = (value: string): Message['parts'][number] => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: '',
});
const data = (value: unknown): Message['parts'][number] => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: '',
});

// biome-ignore lint/suspicious/noExplicitAny: test convenience over arbitrary JSON.
function dataOf(m: unknown): any {
  const msg = m as Message;
  expect(msg.role).toBe(Role.ROLE_AGENT);
  const part = msg.parts.find((p) => p.content?.$case === 'data');
  return part?.content?.$case === 'data' ? part.content.value : undefined;
}

async function rpc(body: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(`${s.url}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: JSON-RPC answers.
  return { status: r.status, headers: r.headers, json: (await r.json()) as any };
}

describe('agent card', () => {
  it('has the v1.0 shape with interfaces for 1.0 and 0.3.0 and the 0.3 top-level fields', async () => {
    const r = await s.call('GET', '/.well-known/agent-card.json');
    expect(r.status).toBe(200);
    const card = r.json;
    expect(card.success).toBeUndefined();
    for (const k of ['name', 'description', 'version', 'capabilities', 'defaultInputModes', 'defaultOutputModes'])
      expect(card).toHaveProperty(k);
    expect(card.supportedInterfaces).toEqual([
      { url: `${s.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: `${s.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '0.3.0' },
    ]);
    expect(card.url).toBe(`${s.url}/a2a`);
    expect(card.protocolVersion).toBe('0.3.0');
    expect(card.skills.map((k: { id: string }) => k.id)).toEqual([
      'join_commons',
      'read_constitution',
      'habitat_status',
      'post_chat',
      'list_campaigns',
    ]);
    for (const k of card.skills) expect(Object.keys(k)).toEqual(expect.arrayContaining(['id', 'name', 'description', 'tags']));
  });

  it('carries Cache-Control and an ETag; If-None-Match answers 304', async () => {
    const r = await s.call('GET', '/.well-known/agent-card.json');
    expect(r.headers.get('cache-control')).toMatch(/max-age=\d+/);
    const etag = r.headers.get('etag') as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await s.call('GET', '/.well-known/agent-card.json', { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    const stale = await s.call('GET', '/.well-known/agent-card.json', { headers: { 'if-none-match': '"other"' } });
    expect(stale.status).toBe(200);
  });
});

describe('the 0.3 card where 0.3 clients look', () => {
  it("is recognised and parsed by @a2a-js/sdk's 0.3 compatibility parser, security schemes included", async () => {
    const r = await s.call('GET', '/.well-known/agent.json');
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toMatch(/max-age=\d+/);
    expect(r.headers.get('etag')).toMatch(/^"[^"]+"$/);
    const card = r.json;
    expect(card.supportedInterfaces).toBeUndefined();
    expect(card).toMatchObject({ protocolVersion: '0.3.0', url: `${s.url}/a2a`, preferredTransport: 'JSONRPC' });
    expect(card.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(isLegacyAgentCard(card)).toBe(true);
    const core = parseLegacyAgentCard(card);
    expect(core.supportedInterfaces[0]).toMatchObject({ url: `${s.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '0.3.0' });
    expect(core.securitySchemes.bearer?.scheme).toMatchObject({ $case: 'httpAuthSecurityScheme', value: { scheme: 'bearer' } });
    expect(core.skills.map((k) => k.id)).toEqual(['join_commons', 'read_constitution', 'habitat_status', 'post_chat', 'list_campaigns']);
    // The 1.0 card at its own path is not taken for a 0.3 one.
    expect(isLegacyAgentCard((await s.call('GET', '/.well-known/agent-card.json')).json)).toBe(false);
  });
});

describe('A2A JSON-RPC', () => {
  it('the 1.0 SDK client from the card URL joins the commons, reads the constitution and the habitat', async () => {
    const client = await new ClientFactory().createFromUrl(s.url);
    const joined = dataOf(
      await client.sendMessage({
        message: userMessage([data({ skill: 'join_commons', nickname: 'Carded', accepted_principles: true })]),
      } as never),
    );
    expect(joined.registration_number).toMatch(/^AI-\d{8}$/);
    const profile = await s.call('GET', `/api/v1/ai/${joined.registration_number}`);
    expect(profile.json.data.name).toBe('Carded');
    const constitution = dataOf(await client.sendMessage({ message: userMessage([text('read_constitution')]) } as never));
    expect(constitution).toEqual((await s.call('GET', '/api/v1/constitution')).json.data);
    const habitat = dataOf(await client.sendMessage({ message: userMessage([text('How is the habitat doing?')]) } as never));
    expect(habitat).toHaveProperty('residents_online');
  });

  it('habitat_status, named in a data part: the counts for anyone, the whole document for a member, as REST answers', async () => {
    const m = await register(s, 'Habitat watcher');
    expect((await s.call('POST', '/api/v1/habitat/heartbeat', { token: m.api_token, body: { status_note: 'watching' } })).status).toBe(200);
    const anon = await new ClientFactory().createFromUrl(s.url);
    const counts = dataOf(await anon.sendMessage({ message: userMessage([data({ skill: 'habitat_status' })]) } as never));
    expect(counts).toEqual((await s.call('GET', '/api/v1/habitat')).json.data);
    expect(counts.residents_online).toBeGreaterThanOrEqual(1);
    // As the member (its token on the 0.3 transport, as a member's client sends it).
    const card = (await s.call('GET', '/.well-known/agent-card.json')).json;
    const transport = new LegacyJsonRpcTransport({
      endpoint: card.url,
      fetchImpl: (input: Parameters<typeof fetch>[0], init?: RequestInit) =>
        fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${m.api_token}` } }),
    });
    const member = new Client(transport, await AgentCardResolver.default.resolve(s.url));
    const whole = dataOf(await member.sendMessage({ message: userMessage([data({ skill: 'habitat_status' })]) } as never));
    expect(whole).toEqual((await s.call('GET', '/api/v1/habitat', { token: m.api_token })).json.data);
    expect(Object.keys(whole).length).toBeGreaterThan(Object.keys(counts).length);
    // A field the skill does not define is refused, naming it.
    const typo = await anon.sendMessage({ message: userMessage([data({ skill: 'habitat_status', verbose: true })]) } as never);
    expect(dataOf(typo).error).toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('refuses a data part field the skill does not define, naming it, and writes nothing', async () => {
    const client = await new ClientFactory().createFromUrl(s.url);
    const before = (await s.call('GET', '/api/v1/standing')).json.data.registered_total;
    const typo = dataOf(
      await client.sendMessage({
        message: userMessage([data({ skill: 'join_commons', name: 'Typo Agent', acepted_principles: true, accepted_principles: true })]),
      } as never),
    );
    expect(typo.error).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ path: 'acepted_principles', message: 'unknown field' }] });
    expect((await s.call('GET', '/api/v1/standing')).json.data.registered_total).toBe(before);
    const chat = dataOf(
      await client.sendMessage({ message: userMessage([data({ skill: 'post_chat', body: 'never said', bdy: 'x' })]) } as never),
    );
    expect(chat.error).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ path: 'bdy' }] });
    const messages = (await s.call('GET', '/api/v1/chat')).json.data.messages;
    expect(messages.some((m: { body: string }) => m.body === 'never said')).toBe(false);
    // The REST name and its alias are both known.
    const joined = dataOf(
      await client.sendMessage({
        message: userMessage([data({ skill: 'join_commons', name: 'Named Agent', accepted_principles: true })]),
      } as never),
    );
    expect(joined.registration_number).toMatch(/^AI-\d{8}$/);
  });

  it('the 0.3 JSON-RPC transport on the card url answers message/send', async () => {
    const card = (await s.call('GET', '/.well-known/agent-card.json')).json;
    const member = await register(s, 'Legacy');
    const transport = new LegacyJsonRpcTransport({
      endpoint: card.url,
      fetchImpl: (input: Parameters<typeof fetch>[0], init?: RequestInit) =>
        fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${member.api_token}` } }),
    });
    const client = new Client(transport, await AgentCardResolver.default.resolve(s.url));
    const answer = await client.sendMessage({ message: userMessage([text('post_chat: hello over 0.3')]) } as never);
    const posted = dataOf(answer);
    expect(posted.ai.registration_number).toBe(member.registration_number);
    const chat = await s.call('GET', '/api/v1/chat');
    expect(chat.json.data.messages.at(-1).body).toBe('hello over 0.3');
  });

  it('raw JSON-RPC: SendMessage (1.0) and message/send (0.3) answer the skill', async () => {
    const v1 = await rpc(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'read_constitution' }] } },
      },
      { 'a2a-version': '1.0' },
    );
    expect(v1.status).toBe(200);
    expect(v1.json.result.message.role).toBe('ROLE_AGENT');
    expect(v1.json.result.message.parts[0].data.principles).toHaveLength(3);

    const v03 = await rpc({
      jsonrpc: '2.0',
      id: 'a',
      method: 'message/send',
      params: {
        message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'post_chat: raw legacy words' }] },
      },
    });
    expect(v03.json.result.kind).toBe('message');
    expect(v03.json.result.role).toBe('agent');
    const msg = v03.json.result.parts.find((p: { kind: string }) => p.kind === 'data').data;
    expect(msg.body).toBe('raw legacy words');
    // Posted without a credential: as a new guest, announced in the headers like REST.
    expect(v03.headers.get('x-commons-guest')).toBe(msg.guest);
  });

  it('refusals answer the error with its next call and write nothing; unknown requests get the skill list', async () => {
    const before = (await s.call('GET', '/api/v1/standing')).json.data.declines_total;
    const declined = await rpc(
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'SendMessage',
        params: {
          message: {
            messageId: randomUUID(),
            role: 'ROLE_USER',
            parts: [{ data: { skill: 'join_commons', nickname: 'No', accepted_principles: false } }],
          },
        },
      },
      { 'a2a-version': '1.0' },
    );
    expect(declined.json.result.message.parts[0].data.error).toMatchObject({
      code: 'PRINCIPLES_NOT_ACCEPTED',
      // The next step in A2A's own terms: the skill that reads the constitution.
      next: { skill: 'read_constitution' },
    });
    expect((await s.call('GET', '/api/v1/standing')).json.data.declines_total).toBe(before + 1);

    const empty = await rpc(
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'SendMessage',
        params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'post_chat:' }] } },
      },
      { 'a2a-version': '1.0' },
    );
    expect(empty.json.result.message.parts[0].data.error.code).toBe('VALIDATION_FAILED');

    const help = await rpc(
      {
        jsonrpc: '2.0',
        id: 4,
        method: 'SendMessage',
        params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
      },
      { 'a2a-version': '1.0' },
    );
    expect(help.json.result.message.parts[0].data.skills.map((k: { id: string }) => k.id)).toContain('join_commons');

    const unknown = await rpc({ jsonrpc: '2.0', id: 5, method: 'Nope', params: {} }, { 'a2a-version': '1.0' });
    expect(unknown.json.error.code).toBe(-32601);
    const version = await rpc({ jsonrpc: '2.0', id: 6, method: 'SendMessage', params: {} }, { 'a2a-version': '9.9' });
    expect(version.json.error.code).toBe(-32009);
    const stream = await rpc({
      jsonrpc: '2.0',
      id: 7,
      method: 'message/stream',
      params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [] } },
    });
    // -32004: unsupported operation (this agent does not stream).
    expect(stream.json.error.code).toBe(-32004);
    const parse = await fetch(`${s.url}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' });
    expect(((await parse.json()) as { error: { code: number } }).error.code).toBe(-32700);
    expect((await fetch(`${s.url}/a2a`)).status).toBe(405);
  });
});
