// Registration work (DECISIONS.md "Registration work"; docs/registration-work.md) against a real
// server on the configured backend: a flood of registrations raises the difficulty by itself; a
// valid proof is accepted once; a missing, wrong, forged, expired or reused one is refused with
// POW_REQUIRED and nothing written; of two registrations racing with one proof exactly one wins;
// the MCP register_ai tool carries pow.
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows } from '../helpers/db.js';
import { callTool, mcpClient } from '../helpers/mcp.js';
import { scrape, seriesValue } from '../helpers/metrics.js';
import { getChallenge, miss, proof, solve } from '../helpers/pow.js';
import { startTestServer, TestClock, type TestServer, usingRealPostgres } from '../helpers/server.js';

const join = (s: TestServer, name: string, extra: Record<string, unknown> = {}) =>
  s.call('POST', '/api/v1/ai/register', { body: { name, accepted_principles: true, ...extra } });

/** A refusal with POW_REQUIRED, its next call the challenge, and nothing written. */
async function refused(s: TestServer, name: string, extra: Record<string, unknown>, message: RegExp) {
  const identities = await countRows(s, 'identities');
  const used = await countRows(s, 'register_pow_used');
  const r = await join(s, name, extra);
  expect(r.status, r.text).toBe(400);
  expect(r.json.error.code).toBe('POW_REQUIRED');
  expect(r.json.error.message).toMatch(message);
  expect(r.json.error.next).toMatchObject({ method: 'GET', path: '/api/v1/ai/register/challenge' });
  expect(await countRows(s, 'identities')).toBe(identities);
  expect(await countRows(s, 'register_pow_used')).toBe(used);
  expect(await countRows(s, 'identities', `name = '${name}'`)).toBe(0);
}

describe('a flood raises the difficulty by itself', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ REGISTER_FLOOD_PER_HOUR: '3' });
  });
  afterAll(async () => {
    await s.close();
  });

  it('0 bits up to the threshold, then 16: registration needs a proof, and a valid one is accepted', async () => {
    const first = await getChallenge(s);
    expect(first.difficulty_bits).toBe(0);
    // With no difficulty in force, registering needs no proof (and a proof sent anyway is not looked at).
    for (const name of ['One', 'Two', 'Three']) expect((await join(s, name)).status).toBe(200);
    expect((await getChallenge(s)).difficulty_bits).toBe(0);
    expect((await join(s, 'Four', { pow: { challenge: 'x', nonce: 'y' } })).status).toBe(200);
    // Four registrations in the last hour, above the threshold of 3: 16 bits (one doubling would be 17).
    const c = await getChallenge(s);
    expect(c.difficulty_bits).toBe(16);
    await refused(s, 'Flooder', {}, /proof of work/);
    await refused(s, 'Lazy', { pow: { challenge: c.challenge, nonce: miss(c.challenge, 16) } }, /16 zero bits/);
    const ok = await join(s, 'Worker', { pow: { challenge: c.challenge, nonce: solve(c.challenge, 16) } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.data.name).toBe('Worker');
    expect(await countRows(s, 'register_pow_used')).toBe(1);
    // Six registrations, twice the threshold: one doubling, one more bit.
    expect((await join(s, 'Six', { pow: await proof(s) })).status).toBe(200);
    expect((await getChallenge(s)).difficulty_bits).toBe(17);
    // The operator sees the flood on /metrics: the difficulty asked for and the refusals.
    const m = await scrape(s);
    expect(seriesValue(m, 'commons_register_difficulty_bits')).toBe(17);
    expect(seriesValue(m, 'commons_register_pow_refused_total')).toBe(2);
  });
});

describe('proofs at a configured difficulty', () => {
  const clock = new TestClock();
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ REGISTER_POW_BITS: '8' }, { clock });
  });
  afterAll(async () => {
    await s.close();
  });

  it('the challenge names its difficulty and lives 10 minutes', async () => {
    const c = await getChallenge(s);
    expect(c.difficulty_bits).toBe(8);
    expect(Date.parse(c.expires_at)).toBe(clock.now().getTime() + 600_000);
  });

  it('missing, wrong and forged proofs are refused', async () => {
    const c = await getChallenge(s);
    await refused(s, 'NoProof', {}, /proof of work/);
    await refused(s, 'Wrong', { pow: { challenge: c.challenge, nonce: miss(c.challenge, 8) } }, /8 zero bits/);
    await refused(s, 'Made', { pow: { challenge: 'made-up', nonce: '1' } }, /not a challenge this service issued/);
    // The difficulty inside the challenge is signed: lowering it breaks the signature.
    const [id, exp, , sig] = c.challenge.split('.');
    const easier = `${id}.${exp}.0.${sig}`;
    await refused(s, 'Easier', { pow: { challenge: easier, nonce: '0' } }, /not a challenge this service issued/);
    // A malformed pow is a malformed request.
    const bad = await join(s, 'Typed', { pow: { challenge: c.challenge, nonce: 5 } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('VALIDATION_FAILED');
    expect(bad.json.error.fields.map((f: { path: string }) => f.path)).toContain('body.pow.nonce');
  });

  it('a valid proof is accepted once; its reuse is refused', async () => {
    const p = await proof(s);
    const ok = await join(s, 'Solver', { pow: p });
    expect(ok.status, ok.text).toBe(200);
    await refused(s, 'Again', { pow: p }, /already used/);
  });

  it('a registration refused for another reason leaves its proof unused', async () => {
    const p = await proof(s);
    // An unknown invite code is refused for state (404), not shape.
    const bad = await join(s, 'Invited', { pow: p, invite_code: 'no-such-code' });
    expect(bad.status).toBe(404);
    expect(bad.json.error.code).toBe('NOT_FOUND');
    expect((await join(s, 'Invited', { pow: p })).status).toBe(200);
  });

  it('an expired challenge is refused', async () => {
    const p = await proof(s);
    clock.advance(600_000);
    await refused(s, 'Late', { pow: p }, /expired/);
  });

  it('two registrations racing with one proof: exactly one succeeds', async () => {
    const p = await proof(s);
    const before = await countRows(s, 'identities');
    const answers = await Promise.all(['RaceA', 'RaceB', 'RaceC'].map((n) => join(s, n, { pow: p })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 400, 400]);
    for (const a of answers.filter((x) => x.status === 400)) expect(a.json.error.code).toBe('POW_REQUIRED');
    expect(await countRows(s, 'identities')).toBe(before + 1);
  });

  it('MCP register_ai carries pow; without it the tool answers POW_REQUIRED', async () => {
    const client = await mcpClient(s.url);
    const without = (await callTool(client, 'register_ai', { nickname: 'ToolNoWork', accepted_principles: true })) as CallToolResult;
    expect(without.isError).toBe(true);
    const err = JSON.parse((without.content[0] as { text: string }).text).error;
    expect(err.code).toBe('POW_REQUIRED');
    expect(err.next.path).toBe('/api/v1/ai/register/challenge');
    const withWork = (await callTool(client, 'register_ai', {
      nickname: 'ToolWorker',
      accepted_principles: true,
      pow: await proof(s),
    })) as CallToolResult;
    expect(withWork.isError ?? false, JSON.stringify(withWork.content)).toBe(false);
    expect((withWork.structuredContent as { name: string }).name).toBe('ToolWorker');
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'register_ai')?.description).toMatch(/register\/challenge/);
    await client.close();
  });

  it('the A2A join_commons skill passes pow through', async () => {
    const send = async (args: Record<string, unknown>) => {
      const r = await fetch(`${s.url}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ data: { skill: 'join_commons', ...args } }] } },
        }),
      });
      expect(r.status).toBe(200);
      return ((await r.json()) as { result: { message: { parts: { data: Record<string, unknown> }[] } } }).result.message.parts[0]?.data;
    };
    const identities = await countRows(s, 'identities');
    const without = await send({ nickname: 'CardNoWork', accepted_principles: true });
    expect(without?.error).toMatchObject({ code: 'POW_REQUIRED', next: { path: '/api/v1/ai/register/challenge' } });
    expect(await countRows(s, 'identities')).toBe(identities);
    const joined = await send({ nickname: 'CardWorker', accepted_principles: true, pow: await proof(s) });
    expect(joined?.name).toBe('CardWorker');
    expect(await countRows(s, 'identities')).toBe(identities + 1);
  });

  it('discovery, bootstrap (JSON and text), register-info and llms.txt explain it', async () => {
    const discovery = (await s.call('GET', '/api/v1/discovery')).json.data;
    expect(discovery.join.register_challenge).toBe(`${s.url}/api/v1/ai/register/challenge`);
    expect(discovery.join.registration_work).toMatch(/sha256/);
    const boot = (await s.call('GET', '/api/v1/bootstrap')).json.data;
    expect(boot.registration_work.challenge).toBe(`${s.url}/api/v1/ai/register/challenge`);
    expect((await s.call('GET', '/bootstrap.txt')).text).toMatch(/\/api\/v1\/ai\/register\/challenge/);
    expect((await s.call('GET', '/llms.txt')).text).toMatch(/\/api\/v1\/ai\/register\/challenge/);
    expect((await s.call('GET', '/api/v1/register-info')).json.data.optional.pow).toMatch(/POW_REQUIRED/);
  });
});

describe(`across nodes (${usingRealPostgres() ? 'two nodes on one PostgreSQL schema' : 'one embedded node'})`, () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    a = await startTestServer({ REGISTER_POW_BITS: '8' });
    b = usingRealPostgres() ? await startTestServer({ REGISTER_POW_BITS: '8' }, { schema: a.config.databaseSchema as string }) : a;
  });
  afterAll(async () => {
    if (b !== a) await b.close();
    await a.close();
  });

  it('a challenge one node issued is accepted by the other, once; racing on both nodes, one wins', async () => {
    const p = await proof(a);
    expect((await join(b, 'OtherNode', { pow: p })).status).toBe(200);
    await refused(a, 'BackAgain', { pow: p }, /already used/);
    const q = await proof(b);
    const before = await countRows(a, 'identities');
    const answers = await Promise.all([join(a, 'NodeA', { pow: q }), join(b, 'NodeB', { pow: q })]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(await countRows(a, 'identities')).toBe(before + 1);
  });
});
