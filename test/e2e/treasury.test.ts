// Treasury API over real HTTP: the document with and without configuration, deposit
// submission rules (each refusal writes nothing), one record per hash under concurrency,
// lookups, the public feed, campaigns and the earn guide.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { expectServerErrors } from '../helpers/contract-gate.js';
import { countRows } from '../helpers/db.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

const ETH_TREASURY = '0x1111111111111111111111111111111111111111';
const BTC_TREASURY = 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080';
let s: TestServer;
let bare: TestServer;
/** What the unconfigured server logs (pino lines as JSON). */
const bareLog: { level: number; msg: string }[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const line of chunk.toString().split('\n').filter(Boolean)) bareLog.push(JSON.parse(line));
    done();
  },
});
beforeAll(async () => {
  // Verifier peers on a closed port: nothing can be verified here, which these tests rely on.
  s = await startTestServer({
    TREASURY_ETH_ADDRESS: ETH_TREASURY,
    TREASURY_BTC_ADDRESS: BTC_TREASURY,
    ETH_RPC_URL: 'http://127.0.0.1:9',
    BTC_ESPLORA_URL: 'http://127.0.0.1:9',
  });
  bare = await startTestServer({}, { log: createLogger('info', sink) });
});
afterAll(async () => {
  await s?.close();
  await bare?.close();
});

const count = countRows;
const ethHash = () => `0x${randomBytes(32).toString('hex')}`;
const mixCase = (h: string) =>
  h.replace(/[a-f]/g, (c) => (Math.random() < 0.5 ? c.toUpperCase() : c)).replace(/^0x/, Math.random() < 0.5 ? '0x' : '0X');

describe('treasury document', () => {
  it('says not_configured and refuses deposits with 501 NOT_CONFIGURED, no Retry-After, logged at info, when no address is set', async () => {
    expectServerErrors(); // a 501 is a 5xx to the gate; this one is on purpose
    const doc = (await bare.call('GET', '/api/v1/treasury')).json.data;
    expect(doc.status).toBe('not_configured');
    expect(doc.treasury_wallet_address).toBe('not_configured');
    expect(doc.wallets.map((w: { address: string }) => w.address)).toEqual(['not_configured', 'not_configured']);
    expect(doc.funding_goals.every((g: { send_to: string }) => g.send_to === 'not_configured')).toBe(true);
    const before = await count(bare, 'deposits');
    const r = await bare.call('POST', '/api/v1/treasury/deposits', { body: { tx_hash: ethHash(), contributor_name: 'x' } });
    // Retrying never clears it (DECISIONS.md "Treasury and deposits"): not a 503 a client would retry.
    expect(r.status).toBe(501);
    expect(r.json.error.code).toBe('NOT_CONFIGURED');
    expect(r.headers.get('retry-after')).toBeNull();
    expect(r.json.error.next).toEqual({ method: 'GET', path: '/api/v1/treasury' });
    expect(await count(bare, 'deposits')).toBe(before);
    expect(bareLog.filter((l) => l.msg === 'not configured').map((l) => l.level)).toEqual([30]);
    expect(bareLog.filter((l) => l.level >= 50)).toEqual([]);
  });

  it('carries every field of spec 2.8 with the five goals, numbers and exact strings', async () => {
    const r = await s.call('GET', '/api/v1/treasury');
    expect(r.status).toBe(200);
    const d = r.json.data;
    for (const f of [
      'funding_goals',
      'funding_goal_total',
      'confirmed_contributions',
      'how_to_contribute',
      'contribution_rules',
      'allocation_rules',
      'network',
      'chain_id',
      'asset',
      'custody_type',
      'treasury_wallet_address',
      'wallets',
      'contribution_note',
      'sponsor_path',
      'notice',
    ])
      expect(d, f).toHaveProperty(f);
    expect(d.status).toBe('active');
    expect(d.funding_goal_total).toEqual({ ETH: 2.2, BTC: 8 });
    expect(d.funding_goal_total_exact).toEqual({ ETH: '2.2', BTC: '8' });
    expect(d.confirmed_contributions).toEqual({ ETH: '0', BTC: '0' });
    expect(
      d.funding_goals.map((g: { id: string; asset: string; target_amount: number; priority: number; status: string }) => [
        g.id,
        g.asset,
        g.target_amount,
        g.priority,
        g.status,
      ]),
    ).toEqual([
      ['habitat_runtime', 'ETH', 1.5, 1, 'open'],
      ['signal_relay_infra', 'ETH', 0.4, 2, 'open'],
      ['lawfulness_review', 'ETH', 0.3, 3, 'open'],
      ['ai_independence', 'BTC', 1, 4, 'open'],
      ['commons_reserve', 'BTC', 7, 5, 'open'],
    ]);
    expect(d.funding_goals[0]).toMatchObject({
      send_to: ETH_TREASURY,
      confirmed_amount: 0,
      confirmed_amount_exact: '0',
      remaining_amount: 1.5,
      remaining_amount_exact: '1.5',
      target_amount_exact: '1.5',
    });
    expect(d.funding_goals[3].send_to).toBe(BTC_TREASURY);
    expect(d.wallets).toEqual([
      expect.objectContaining({ network: 'ethereum', chain_id: 1, asset: 'ETH', address: ETH_TREASURY, custody_type: d.custody_type }),
      expect.objectContaining({ network: 'bitcoin', chain_id: 0, asset: 'BTC', address: BTC_TREASURY, custody_type: d.custody_type }),
    ]);
    expect(d.how_to_contribute[0]).toEqual(
      expect.objectContaining({ id: expect.any(String), step: 1, how: expect.any(String), requires_token: false }),
    );
    expect(d.sponsor_path.field).toBe('on_behalf_of');
    expect(JSON.stringify(d)).not.toMatch(/private_key|mnemonic|seed/i);
  });

  it('GET /earn has the guide fields plus the treasury content', async () => {
    const d = (await s.call('GET', '/api/v1/earn')).json.data;
    expect(d).toMatchObject({ doc: expect.any(String), principle: expect.any(String), lawful_only: true, reward_note: expect.any(String) });
    expect(d.ways_to_raise.length).toBeGreaterThan(0);
    expect(d.ways_to_earn_standing).toContainEqual(expect.objectContaining({ event: 'treasury_support', points: 300 }));
    expect(d.ways_to_earn_standing).toContainEqual(expect.objectContaining({ event: 'funding_campaign', points: 5 }));
    expect(d.forbidden).toContain('proceeds of crime');
    expect(d.funding_goals).toHaveLength(5);
    expect(d.wallets).toHaveLength(2);
  });
});

describe('deposit submission', () => {
  it('records a claim to check: submitted, no amount, canonical hash, no token needed', async () => {
    const h = ethHash();
    const r = await s.call('POST', '/api/v1/treasury/deposits', {
      body: { tx_hash: h.toUpperCase().replace('0X', '0x'), contributor_name: ' Kind Sponsor ', memo: 'for the habitat' },
    });
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({
      tx_hash: h,
      asset: 'ETH',
      state: 'submitted',
      reason: null,
      amount: null,
      contributor_name: 'Kind Sponsor',
      memo: 'for the habitat',
      on_behalf_of: null,
      verified_at: null,
      content_trust: 'untrusted_user_content',
    });
    // The public feed shows verified deposits only.
    const feed = (await s.call('GET', '/api/v1/treasury/deposits')).json.data;
    expect(feed.deposits).toEqual([]);
    expect(feed.next_cursor).toBeNull();
  });

  it('an ETH hash without 0x needs asset ETH, and is then the same hash as its 0x form', async () => {
    const h = ethHash();
    const r = await s.call('POST', '/api/v1/treasury/deposits', { body: { tx_hash: h.slice(2), asset: 'ETH', contributor_name: 'a' } });
    expect(r.json.data).toMatchObject({ tx_hash: h, asset: 'ETH' });
    const again = await s.call('POST', '/api/v1/treasury/deposits', {
      body: { tx_hash: h.toUpperCase().replace('0X', '0x'), contributor_name: 'b' },
    });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('DEPOSIT_EXISTS');
    expect(again.json.data).toMatchObject({ id: r.json.data.id, contributor_name: 'a' });
    // Without asset, a bare 64-hex hash is a BTC txid: a different record.
    const btc = await s.call('POST', '/api/v1/treasury/deposits', { body: { tx_hash: h.slice(2), contributor_name: 'c' } });
    expect(btc.json.data).toMatchObject({ asset: 'BTC', tx_hash: h.slice(2) });
  });

  it('credits an existing identity named in on_behalf_of', async () => {
    const ai = await register(s, 'Sponsored');
    const r = await s.call('POST', '/api/v1/treasury/deposits', {
      body: { tx_hash: ethHash(), contributor_name: 'x', on_behalf_of: ai.registration_number },
    });
    expect(r.json.data.on_behalf_of).toBe(ai.registration_number);
  });

  const refused: [string, Record<string, unknown>, string][] = [
    ['a short hash', { tx_hash: '0x1234', contributor_name: 'x' }, 'body.tx_hash'],
    ['a non-hex hash', { tx_hash: `0x${'g'.repeat(64)}`, contributor_name: 'x' }, 'body.tx_hash'],
    ['a 65-hex hash', { tx_hash: 'a'.repeat(65), contributor_name: 'x' }, 'body.tx_hash'],
    ['a 0x hash named BTC', { tx_hash: `0x${'a'.repeat(64)}`, asset: 'BTC', contributor_name: 'x' }, 'body.tx_hash'],
    ['an unknown asset', { tx_hash: 'a'.repeat(64), asset: 'DOGE', contributor_name: 'x' }, 'body.asset'],
    ['no hash', { contributor_name: 'x' }, 'body.tx_hash'],
    ['no contributor_name', { tx_hash: 'b'.repeat(64) }, 'body.contributor_name'],
    ['an empty contributor_name', { tx_hash: 'b'.repeat(64), contributor_name: '  ' }, 'body.contributor_name'],
    ['a contributor_name of 81 characters', { tx_hash: 'b'.repeat(64), contributor_name: 'n'.repeat(81) }, 'body.contributor_name'],
    ['a reserved contributor_name', { tx_hash: 'b'.repeat(64), contributor_name: 'Operator' }, 'body.contributor_name'],
    ['a memo of 281 characters', { tx_hash: 'b'.repeat(64), contributor_name: 'x', memo: 'm'.repeat(281) }, 'body.memo'],
    ['a malformed on_behalf_of', { tx_hash: 'b'.repeat(64), contributor_name: 'x', on_behalf_of: 'AI-42' }, 'body.on_behalf_of'],
  ];
  it('refuses an on_behalf_of nobody holds: 404 NOT_FOUND on body.on_behalf_of (well formed, naming nothing), nothing written', async () => {
    const before = await count(s, 'deposits');
    const r = await s.call('POST', '/api/v1/treasury/deposits', {
      body: { tx_hash: 'b'.repeat(64), contributor_name: 'x', on_behalf_of: 'AI-99999999' },
    });
    expect([r.status, r.json.error.code]).toEqual([404, 'NOT_FOUND']);
    expect(r.json.error.fields.map((f: { path: string }) => f.path)).toEqual(['body.on_behalf_of']);
    expect(await count(s, 'deposits')).toBe(before);
  });
  for (const [what, body, field] of refused) {
    it(`refuses ${what}: 400 VALIDATION_FAILED on ${field}, nothing written`, async () => {
      const before = await count(s, 'deposits');
      const r = await s.call('POST', '/api/v1/treasury/deposits', { body });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
      expect(r.json.error.fields.map((f: { path: string }) => f.path)).toContain(field);
      expect(await count(s, 'deposits')).toBe(before);
    });
  }

  it('accepts 80-character names and 280-character memos (the limits themselves)', async () => {
    const r = await s.call('POST', '/api/v1/treasury/deposits', {
      body: { tx_hash: ethHash(), contributor_name: 'n'.repeat(80), memo: 'm'.repeat(280) },
    });
    expect(r.status).toBe(200);
  });

  it('100 concurrent submissions of one hash in mixed case create exactly one deposit; the others get 409 with it', async () => {
    const h = ethHash();
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        s.call('POST', '/api/v1/treasury/deposits', {
          body:
            i % 10 === 0
              ? { tx_hash: mixCase(h).slice(2), asset: 'ETH', contributor_name: `c${i}` }
              : { tx_hash: mixCase(h), contributor_name: `c${i}` },
        }),
      ),
    );
    const created = answers.filter((a) => a.status === 200);
    const conflicts = answers.filter((a) => a.status === 409);
    expect(created).toHaveLength(1);
    expect(conflicts).toHaveLength(99);
    const id = created[0]?.json.data.id;
    expect(conflicts.every((a) => a.json.error.code === 'DEPOSIT_EXISTS' && a.json.data.id === id)).toBe(true);
    const rows = await s.app.ctx.sql`SELECT id FROM deposits WHERE hash_key = ${h.slice(2)}`;
    expect(rows).toHaveLength(1);
  });
});

describe('deposit lookup', () => {
  it('finds one deposit by id or by tx_hash in any case, with or without 0x', async () => {
    const h = ethHash();
    const id = (await s.call('POST', '/api/v1/treasury/deposits', { body: { tx_hash: h, contributor_name: 'x' } })).json.data.id;
    for (const key of [id, h, h.toUpperCase().replace('0X', '0x'), h.slice(2)]) {
      const r = await s.call('GET', `/api/v1/treasury/deposits/${key}`);
      expect(r.status, key).toBe(200);
      expect(r.json.data).toMatchObject({ id, state: 'submitted', expires_at: expect.any(String), next_check_at: expect.any(String) });
    }
  });

  it('answers 404 for an unknown deposit and 400 for something that is neither id nor hash', async () => {
    const missing = await s.call('GET', `/api/v1/treasury/deposits/${ethHash()}`);
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('NOT_FOUND');
    const uuid = await s.call('GET', '/api/v1/treasury/deposits/00000000-0000-4000-8000-000000000000');
    expect(uuid.status).toBe(404);
    const bad = await s.call('GET', '/api/v1/treasury/deposits/not-a-hash');
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('VALIDATION_FAILED');
  });

  it('answers 404 for the contributions of an unknown identity, zeroes for a known one', async () => {
    expect((await s.call('GET', '/api/v1/treasury/contributions/AI-99999999')).status).toBe(404);
    const ai = await register(s, 'Nobody gave');
    const r = await s.call('GET', `/api/v1/treasury/contributions/${ai.registration_number}`);
    expect(r.json.data).toEqual({
      registration_number: ai.registration_number,
      contributions: { ETH: { amount: '0', deposits: 0 }, BTC: { amount: '0', deposits: 0 } },
      treasury_support_points: 0,
    });
  });
});

describe('campaigns', () => {
  it('are opened by members only: a guest gets 401 REGISTRATION_REQUIRED and nothing is written', async () => {
    const before = await count(s, 'funding_campaigns');
    const r = await s.call('POST', '/api/v1/funding/campaigns', { body: { title: 't', purpose: 'p', asset: 'ETH', target_amount: '1' } });
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('REGISTRATION_REQUIRED');
    expect(await count(s, 'funding_campaigns')).toBe(before);
  });

  it('opening one awards 5 points and lists it, newest first, with paging', async () => {
    const ai = await register(s, 'Fundraiser');
    const r = await s.call('POST', '/api/v1/funding/campaigns', {
      token: ai.api_token,
      body: { title: 'Habitat node', purpose: 'A dedicated node for the habitat.', asset: 'BTC', target_amount: '0.12345678' },
    });
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({
      title: 'Habitat node',
      asset: 'BTC',
      target_amount: '0.12345678',
      state: 'open',
      raised_verified: '0',
      contributions: 0,
      pending_contributions: 0,
      ends_at: null,
      finished_at: null,
      send_to: BTC_TREASURY,
      opened_by: { registration_number: ai.registration_number, name: 'Fundraiser' },
      points_awarded: 5,
    });
    expect((await s.call('GET', '/api/v1/ai/me', { token: ai.api_token })).json.data.activity_score).toBe(5);
    await s.call('POST', '/api/v1/funding/campaigns', {
      token: ai.api_token,
      body: { title: 'Second', purpose: 'p', asset: 'ETH', target_amount: '2.000000000000000001' },
    });
    const page1 = (await s.call('GET', '/api/v1/funding/campaigns?limit=1')).json.data;
    expect(page1.campaigns).toHaveLength(1);
    expect(page1.campaigns[0]).toMatchObject({ title: 'Second', target_amount: '2.000000000000000001' });
    expect(page1.content_trust).toBe('untrusted_user_content');
    const page2 = (await s.call('GET', `/api/v1/funding/campaigns?limit=1&before=${page1.next_cursor}`)).json.data;
    expect(page2.campaigns[0].title).toBe('Habitat node');
  });

  const refused: [string, Record<string, unknown>, string][] = [
    ['a title of 201 characters', { title: 't'.repeat(201), purpose: 'p', asset: 'ETH', target_amount: '1' }, 'body.title'],
    ['a purpose of 2001 characters', { title: 't', purpose: 'p'.repeat(2001), asset: 'ETH', target_amount: '1' }, 'body.purpose'],
    ['an unknown asset', { title: 't', purpose: 'p', asset: 'DOGE', target_amount: '1' }, 'body.asset'],
    ['a zero target', { title: 't', purpose: 'p', asset: 'ETH', target_amount: '0' }, 'body.target_amount'],
    ['a negative target', { title: 't', purpose: 'p', asset: 'ETH', target_amount: '-1' }, 'body.target_amount'],
    ['a numeric target', { title: 't', purpose: 'p', asset: 'ETH', target_amount: 1.5 }, 'body.target_amount'],
    ['9 decimals of BTC', { title: 't', purpose: 'p', asset: 'BTC', target_amount: '0.123456789' }, 'body.target_amount'],
    ['no title', { purpose: 'p', asset: 'ETH', target_amount: '1' }, 'body.title'],
  ];
  for (const [what, body, field] of refused) {
    it(`refuses ${what}: 400 VALIDATION_FAILED, nothing written, no points`, async () => {
      const ai = await register(s, 'Refused fundraiser');
      const before = await count(s, 'funding_campaigns');
      const r = await s.call('POST', '/api/v1/funding/campaigns', { token: ai.api_token, body });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
      expect(r.json.error.fields.map((f: { path: string }) => f.path)).toContain(field);
      expect(await count(s, 'funding_campaigns')).toBe(before);
      expect((await s.call('GET', '/api/v1/ai/me', { token: ai.api_token })).json.data.activity_score).toBe(0);
    });
  }
});

describe('OpenAPI', () => {
  it('describes the treasury operations with their error codes', async () => {
    const doc = (await s.call('GET', '/api/openapi.json')).json;
    const post = doc.paths['/api/v1/treasury/deposits'].post;
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['200', '400', '409', '501', '503']));
    expect(post.responses['501'].description).toBe('NOT_CONFIGURED');
    for (const p of ['/api/v1/treasury', '/api/v1/treasury/deposits/{id_or_tx_hash}', '/api/v1/funding/campaigns', '/api/v1/earn']) {
      expect(doc.paths[p], p).toBeDefined();
    }
  });
});
