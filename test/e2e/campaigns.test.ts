// Campaign rules over real HTTP (docs/treasury.md "Campaigns"): the record, list and detail,
// ends_at bounds, the per-member cap, closing by the opener or the operator (audited), hidden
// campaigns left out, and deposit reports naming a campaign: each refusal with its exact status
// and code, and nothing written. Verification on a real chain is in campaigns-eth.test.ts.
import { randomBytes } from 'node:crypto';
import { type Message, Role } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TreasuryEventSchema } from '../../src/domain/campaign-schemas.js';
import type { BusMessage } from '../../src/domain/ports.js';
import { countRows } from '../helpers/db.js';
import { callTool, mcpClient } from '../helpers/mcp.js';
import { hide, OPERATOR_TOKEN, operatorEnv } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

const ETH_TREASURY = '0x1111111111111111111111111111111111111111';
const BTC_TREASURY = 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080';
const DAY = 86_400_000;
let s: TestServer;
const events: BusMessage[] = [];

beforeAll(async () => {
  // Verifier peers on a closed port: reported deposits stay unverified here.
  s = await startTestServer({
    ...operatorEnv(),
    TREASURY_ETH_ADDRESS: ETH_TREASURY,
    TREASURY_BTC_ADDRESS: BTC_TREASURY,
    ETH_RPC_URL: 'http://127.0.0.1:9',
    BTC_ESPLORA_URL: 'http://127.0.0.1:9',
  });
  s.app.ctx.bus.subscribe('treasury', (m) => events.push(m));
});
afterAll(async () => {
  await s?.close();
});

type Member = { registration_number: string; api_token: string };
const open = (m: Member, body: Record<string, unknown> = {}) =>
  s.call('POST', '/api/v1/funding/campaigns', {
    token: m.api_token,
    body: { title: 'Node fund', purpose: 'A node for the habitat.', asset: 'ETH', target_amount: '1', ...body },
  });
const openId = async (m: Member, body: Record<string, unknown> = {}): Promise<string> => {
  const r = await open(m, body);
  expect(r.status, r.text).toBe(200);
  return r.json.data.id;
};
const report = (body: Record<string, unknown>) =>
  s.call('POST', '/api/v1/treasury/deposits', {
    body: { tx_hash: `0x${randomBytes(32).toString('hex')}`, contributor_name: 'Sponsor', ...body },
  });
const detail = async (id: string) => (await s.call('GET', `/api/v1/funding/campaigns/${id}`)).json.data;
const campaignsOf = async (m: Member) => countRows(s, 'funding_campaigns', `opened_by = ${Number(m.registration_number.slice(3))}`);

describe('the campaign record', () => {
  it('opens with ends_at, shows the record fields, and is listed newest first and in detail', async () => {
    const ai = await register(s, 'Opener');
    const endsAt = new Date(Date.now() + 30 * DAY).toISOString();
    const r = await open(ai, { title: 'Relay fund', asset: 'BTC', target_amount: '0.5', ends_at: endsAt });
    expect(r.status, r.text).toBe(200);
    expect(r.json.data).toMatchObject({
      title: 'Relay fund',
      asset: 'BTC',
      target_amount: '0.5',
      raised_verified: '0',
      remaining_amount: '0.5',
      percent: 0,
      contributions: 0,
      pending_contributions: 0,
      state: 'open',
      ends_at: endsAt,
      finished_at: null,
      closed_by: null,
      opened_by: { registration_number: ai.registration_number, name: 'Opener' },
      points_awarded: 5,
      content_trust: 'untrusted_user_content',
    });
    const id = r.json.data.id;
    expect(await detail(id)).toMatchObject({ id, state: 'open', opened_at: r.json.data.opened_at });
    const list = (await s.call('GET', '/api/v1/funding/campaigns')).json.data;
    expect(list.campaigns[0].id).toBe(id);
    expect(list.content_trust).toBe('untrusted_user_content');
    const opened = events.find((e) => (e.data as { campaign?: { id: string } }).campaign?.id === id);
    expect(TreasuryEventSchema.parse(opened?.data)).toMatchObject({ kind: 'campaign_opened' });
    // The treasury document lists open campaigns with the same record.
    const doc = (await s.call('GET', '/api/v1/treasury')).json.data;
    expect(doc.campaigns.open.map((c: { id: string }) => c.id)).toContain(id);
    expect(doc.campaigns.rules.length).toBeGreaterThan(0);
    // The stream's document describes the topic's payloads, campaigns' included.
    const asyncapi = (await s.call('GET', '/api/asyncapi.json')).json;
    expect(JSON.stringify(asyncapi['x-topics'].treasury.payload)).toContain('campaign_funded');
    // Discovery names the routes and the MCP tool.
    const discovery = (await s.call('GET', '/api/v1/discovery')).json.data;
    const paths = discovery.endpoints.map((e: { method: string; path: string }) => `${e.method} ${e.path}`);
    expect(paths).toEqual(expect.arrayContaining(['GET /api/v1/funding/campaigns/{id}', 'POST /api/v1/funding/campaigns/{id}/close']));
    expect(discovery.protocols.mcp.tools).toContain('list_campaigns');
  });

  it('answers 404 NOT_FOUND for an unknown campaign', async () => {
    const r = await s.call('GET', `/api/v1/funding/campaigns/${crypto.randomUUID()}`);
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('NOT_FOUND');
  });

  const tooFar = () => new Date(Date.now() + 91 * DAY).toISOString();
  // A time outside the window is well formed (the schema takes it): the clock refuses it, 409.
  for (const [what, endsAt, status, code] of [
    ['in the past', () => '2020-01-01T00:00:00Z', 409, 'INVALID_STATE'],
    ['more than 90 days ahead', tooFar, 409, 'INVALID_STATE'],
    ['not a time', () => 'next week', 400, 'VALIDATION_FAILED'],
  ] as const) {
    it(`refuses an ends_at ${what}: ${status} ${code} on body.ends_at, nothing written, no points`, async () => {
      const ai = await register(s, 'Too late');
      const r = await open(ai, { ends_at: endsAt() });
      expect(r.status).toBe(status);
      expect(r.json.error.code).toBe(code);
      expect(r.json.error.fields.map((f: { path: string }) => f.path)).toEqual(['body.ends_at']);
      expect(await campaignsOf(ai)).toBe(0);
      expect((await s.call('GET', '/api/v1/ai/me', { token: ai.api_token })).json.data.activity_score).toBe(0);
    });
  }
});

describe('abuse limits', () => {
  it('a member has at most 3 open campaigns: the 4th answers 409 CAMPAIGN_LIMIT and writes nothing; closing one frees a place', async () => {
    const ai = await register(s, 'Busy opener');
    const ids = [await openId(ai), await openId(ai), await openId(ai)];
    const r = await open(ai, { title: 'One too many' });
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe('CAMPAIGN_LIMIT');
    expect(r.json.error.message).toContain('at most 3 open campaigns');
    expect(await campaignsOf(ai)).toBe(3);
    expect((await s.call('GET', '/api/v1/ai/me', { token: ai.api_token })).json.data.activity_score).toBe(15);
    expect((await s.call('POST', `/api/v1/funding/campaigns/${ids[0]}/close`, { token: ai.api_token })).status).toBe(200);
    expect((await open(ai, { title: 'Now it fits' })).status).toBe(200);
  });

  it('the cap holds under concurrency: 6 openings at once make 3', async () => {
    const ai = await register(s, 'Racing opener');
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => open(ai, { title: `race ${i}` })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 409, 409, 409]);
    expect(await campaignsOf(ai)).toBe(3);
  });
});

describe('closing', () => {
  it('by someone else: 403 FORBIDDEN, unchanged; by its opener: closed once, then 409 INVALID_STATE', async () => {
    const ai = await register(s, 'Closer');
    const other = await register(s, 'Stranger');
    const id = await openId(ai);
    const r = await s.call('POST', `/api/v1/funding/campaigns/${id}/close`, { token: other.api_token });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('FORBIDDEN');
    expect((await detail(id)).state).toBe('open');

    const c = await s.call('POST', `/api/v1/funding/campaigns/${id}/close`, { token: ai.api_token });
    expect(c.status, c.text).toBe(200);
    expect(c.json.data).toMatchObject({ state: 'closed', closed_by: ai.registration_number });
    expect(c.json.data.finished_at).not.toBeNull();
    const again = await s.call('POST', `/api/v1/funding/campaigns/${id}/close`, { token: ai.api_token });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('INVALID_STATE');
    expect((await detail(id)).finished_at).toBe(c.json.data.finished_at);
    // The opener made this move itself: no inbox item for it.
    expect((await s.call('GET', '/api/v1/inbox', { token: ai.api_token })).json.data.items).toEqual([]);
    // Closed ones leave the default list and show under state=closed.
    const open_ = (await s.call('GET', '/api/v1/funding/campaigns?limit=100')).json.data.campaigns.map((x: { id: string }) => x.id);
    expect(open_).not.toContain(id);
    const closed = (await s.call('GET', '/api/v1/funding/campaigns?state=closed&limit=100')).json.data.campaigns;
    expect(closed.map((x: { id: string }) => x.id)).toContain(id);
    const ev = events.filter((e) => (e.data as { kind: string; campaign?: { id: string } }).campaign?.id === id);
    expect(ev.map((e) => (e.data as { kind: string }).kind)).toEqual(['campaign_opened', 'campaign_closed']);
  });

  it('opening and closing 12 times leaves the score where it was: each close before a counted contribution takes the 5 points back', async () => {
    const ai = await register(s, 'Cycler');
    const me = async () => (await s.call('GET', '/api/v1/ai/me', { token: ai.api_token })).json.data;
    const withdrawn = () =>
      countRows(s, 'point_events', `identity_id = ${Number(ai.registration_number.slice(3))} AND kind = 'funding_campaign_withdrawn'`);
    for (let i = 0; i < 12; i++) {
      const id = await openId(ai, { title: `cycle ${i}` });
      expect((await me()).activity_score).toBe(5);
      // A reported, unverified deposit is no counted contribution.
      if (i === 0) expect((await report({ campaign_id: id })).status).toBe(200);
      const c = await s.call('POST', `/api/v1/funding/campaigns/${id}/close`, { token: ai.api_token });
      expect(c.status, c.text).toBe(200);
      expect((await me()).activity_score).toBe(0);
    }
    expect(await me()).toMatchObject({ activity_score: 0, badge_tier: null });
    expect(await withdrawn()).toBe(12);
    // A refused close (already closed) takes nothing more.
    const last = (await s.call('GET', '/api/v1/funding/campaigns?state=closed&limit=1')).json.data.campaigns[0].id;
    expect((await s.call('POST', `/api/v1/funding/campaigns/${last}/close`, { token: ai.api_token })).status).toBe(409);
    expect(await withdrawn()).toBe(12);
    expect((await me()).activity_score).toBe(0);
  });

  it('by the operator: audited as campaign.closed, and the opener finds it in its inbox', async () => {
    const ai = await register(s, 'Operator closed');
    const id = await openId(ai);
    const member = await s.call('POST', `/api/v1/operator/campaigns/${id}/close`, { token: ai.api_token, body: {} });
    expect(member.status).toBe(401);
    expect((await detail(id)).state).toBe('open');
    const r = await s.call('POST', `/api/v1/operator/campaigns/${id}/close`, { token: OPERATOR_TOKEN, body: { reason: 'misleading' } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.data).toMatchObject({ state: 'closed', closed_by: 'operator' });
    const audit = (await s.call('GET', `/api/v1/operator/audit?action=campaign.closed&target_id=${id}`, { token: OPERATOR_TOKEN })).json
      .data;
    expect(audit.entries).toHaveLength(1);
    expect(audit.entries[0]).toMatchObject({ target_type: 'campaign', detail: { before: 'open', reason: 'misleading' } });
    const inbox = (await s.call('GET', '/api/v1/inbox', { token: ai.api_token })).json.data.items;
    expect(inbox).toEqual([
      expect.objectContaining({ kind: 'campaign', actor: null, subject: expect.objectContaining({ type: 'campaign', id }) }),
    ]);
  });

  it('a hidden campaign is left out of lists and answers 404 to anyone but the operator', async () => {
    const ai = await register(s, 'Hidden opener');
    const id = await openId(ai, { title: 'hide me' });
    await hide(s, 'campaign', id);
    expect((await s.call('GET', `/api/v1/funding/campaigns/${id}`)).status).toBe(404);
    const all = (await s.call('GET', '/api/v1/funding/campaigns?state=all&limit=100')).json.data.campaigns;
    expect(all.map((x: { id: string }) => x.id)).not.toContain(id);
    expect((await report({ campaign_id: id })).status).toBe(404);
    expect((await s.call('POST', `/api/v1/funding/campaigns/${id}/close`, { token: ai.api_token })).status).toBe(404);
  });
});

describe('deposit reports naming a campaign', () => {
  let opener: Member;
  let eth: string;
  beforeAll(async () => {
    opener = await register(s, 'Reported');
    eth = await openId(opener, { asset: 'ETH' });
  });

  it('are counted as pending, never as raised, until verified', async () => {
    const r = await report({ campaign_id: eth.toUpperCase() });
    expect(r.status, r.text).toBe(200);
    expect(r.json.data).toMatchObject({ state: 'submitted', campaign_id: eth, amount: null });
    expect(await detail(eth)).toMatchObject({ pending_contributions: 1, contributions: 0, raised_verified: '0', percent: 0 });
  });

  const refusals: [string, () => Promise<Record<string, unknown>>, number, string, string | null][] = [
    ['an unknown campaign', async () => ({ campaign_id: crypto.randomUUID() }), 404, 'NOT_FOUND', null],
    ['a malformed campaign id', async () => ({ campaign_id: 'campaign-1' }), 400, 'VALIDATION_FAILED', 'body.campaign_id'],
    [
      'a campaign of the other asset',
      async () => ({ campaign_id: eth, tx_hash: randomBytes(32).toString('hex') }),
      409,
      'INVALID_STATE',
      'body.campaign_id',
    ],
    [
      'a closed campaign',
      async () => {
        const id = await openId(await register(s, 'Soon closed'));
        const r = await s.call('POST', `/api/v1/operator/campaigns/${id}/close`, { token: OPERATOR_TOKEN, body: {} });
        expect(r.status, r.text).toBe(200);
        return { campaign_id: id };
      },
      409,
      'INVALID_STATE',
      null,
    ],
  ];
  for (const [what, body, status, code, field] of refusals) {
    it(`refuses ${what}: ${status} ${code}, no deposit written`, async () => {
      const b = await body();
      const before = await countRows(s, 'deposits');
      const r = await report(b);
      expect(r.status, r.text).toBe(status);
      expect(r.json.error.code).toBe(code);
      if (field) expect(r.json.error.fields.map((f: { path: string }) => f.path)).toEqual([field]);
      expect(await countRows(s, 'deposits')).toBe(before);
    });
  }
});

describe('the tools that list campaigns', () => {
  it('MCP list_campaigns and A2A list_campaigns answer the REST list, with the record fields', async () => {
    const ai = await register(s, 'Tool opener');
    const id = await openId(ai, { title: 'Listed by tools', target_amount: '0.3' });
    const rest = (await s.call('GET', '/api/v1/funding/campaigns?state=all&limit=5')).json.data;
    expect(rest.campaigns[0]).toMatchObject({ id, raised_verified: '0', contributions: 0, pending_contributions: 0, state: 'open' });

    const client = await mcpClient(s.url);
    const r = await callTool(client, 'list_campaigns', { state: 'all', limit: 5 });
    await client.close();
    expect(r.isError ?? false).toBe(false);
    expect(r.structuredContent).toEqual(rest);

    const a2a = await new ClientFactory().createFromUrl(s.url);
    const message: Message = {
      messageId: crypto.randomUUID(),
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [
        {
          content: { $case: 'data', value: { skill: 'list_campaigns', state: 'all', limit: 5 } },
          metadata: undefined,
          filename: '',
          mediaType: '',
        },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    const answer = (await a2a.sendMessage({ message } as never)) as Message;
    expect(answer.role).toBe(Role.ROLE_AGENT);
    const part = answer.parts.find((p) => p.content?.$case === 'data');
    expect(part?.content?.value).toEqual(rest);
  });
});
