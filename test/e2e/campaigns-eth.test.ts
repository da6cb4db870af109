// Campaigns on a real local chain (ganache, ethers sending real transactions; docs/treasury.md
// "Campaigns"): verified deposits count toward a campaign in the transaction that verifies them and
// fund it at its target, an unverified one never counts, a finished campaign refuses new reports
// but counts a deposit reported while it was open, and ends_at ends a campaign once, across a
// restart and (real PostgreSQL) with two nodes racing for it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositVerifierOf } from '../../src/actors/deposit-verifier.js';
import { TreasuryEventSchema } from '../../src/domain/campaign-schemas.js';
import { endDueCampaigns } from '../../src/domain/campaigns.js';
import type { BusMessage } from '../../src/domain/ports.js';
import { countRows } from '../helpers/db.js';
import { CHAIN_ID, type Chain, startChain } from '../helpers/ganache.js';
import { sample, scrape } from '../helpers/metrics.js';
import { SharedStore, twoNodes } from '../helpers/nodes.js';
import { register, startTestServer, TestClock, type TestServer, usingRealPostgres } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const H = 3600_000;
let chain: Chain;
let treasury: string;
const clock = new TestClock(Date.parse('2026-03-01T00:00:00Z'));

const env = () => ({
  TREASURY_ETH_ADDRESS: treasury,
  ETH_RPC_URL: chain.url,
  ETH_CHAIN_ID: String(CHAIN_ID),
  ETH_MIN_CONFIRMATIONS: '3',
});

beforeAll(async () => {
  chain = await startChain();
  treasury = await chain.deployTreasury();
});
afterAll(async () => {
  await chain?.close();
});

type Member = { registration_number: string; api_token: string };
const runDue = (srv: TestServer) => depositVerifierOf(srv.app)?.runDue() as Promise<number>;
const openCampaign = async (srv: TestServer, m: Member, body: Record<string, unknown> = {}): Promise<string> => {
  const r = await srv.call('POST', '/api/v1/funding/campaigns', {
    token: m.api_token,
    body: { title: 'Habitat node', purpose: 'A node of our own.', asset: 'ETH', target_amount: '0.1', ...body },
  });
  expect(r.status, r.text).toBe(200);
  return r.json.data.id;
};
/** A real transfer to the treasury with `confirmations` blocks on it, reported for `campaign`. */
const give = async (srv: TestServer, eth: string, campaign: string, confirmations = 3) => {
  const tx = await chain.send(treasury, eth);
  await tx.wait();
  if (confirmations > 1) await chain.mine(confirmations - 1);
  const r = await srv.call('POST', '/api/v1/treasury/deposits', {
    body: { tx_hash: tx.hash, contributor_name: 'Sponsor', campaign_id: campaign },
  });
  expect(r.status, r.text).toBe(200);
  return { tx: tx.hash, id: r.json.data.id as string };
};
const campaign = async (srv: TestServer, id: string) => (await srv.call('GET', `/api/v1/funding/campaigns/${id}`)).json.data;
const deposit = async (srv: TestServer, id: string) => (await srv.call('GET', `/api/v1/treasury/deposits/${id}`)).json.data;
const inboxOf = async (srv: TestServer, m: Member) =>
  (await srv.call('GET', '/api/v1/inbox', { token: m.api_token })).json.data.items as { kind: string; excerpt: string }[];

describe('counting verified deposits', () => {
  let s: TestServer;
  const events: BusMessage[] = [];
  beforeAll(async () => {
    s = await startTestServer(env(), { clock });
    s.app.ctx.bus.subscribe('treasury', (m) => events.push(m));
  });
  afterAll(async () => {
    await s?.close();
  });
  const kinds = (id: string) =>
    events
      .map((e) => TreasuryEventSchema.parse(e.data))
      .filter((d) => 'campaign' in d && d.campaign.id === id)
      .map((d) => d.kind);

  it('reaches funded from two verified deposits, not from an unverified one; a late verification still counts', async () => {
    const opener = await register(s, 'Fundraiser');
    const id = await openCampaign(s, opener);

    const a = await give(s, '0.04', id);
    await runDue(s);
    expect((await deposit(s, a.id)).state).toBe('verified');
    expect(await campaign(s, id)).toMatchObject({ state: 'open', raised_verified: '0.04', contributions: 1, percent: 40 });

    // A deposit large enough to fund it alone, on chain but with 1 confirmation of 3: not counted.
    const big = await give(s, '0.5', id, 1);
    await runDue(s);
    expect((await deposit(s, big.id)).state).toBe('verifying');
    expect(await campaign(s, id)).toMatchObject({
      state: 'open',
      raised_verified: '0.04',
      remaining_amount: '0.06',
      contributions: 1,
      pending_contributions: 1,
      finished_at: null,
    });

    // The second verified deposit takes it past its target: funded at once, the extra counted.
    const b = await give(s, '0.070000000000000001', id);
    await runDue(s);
    expect((await deposit(s, b.id)).state).toBe('verified');
    const funded = await campaign(s, id);
    expect(funded).toMatchObject({
      state: 'funded',
      raised_verified: '0.110000000000000001',
      remaining_amount: '0',
      percent: 100,
      contributions: 2,
      pending_contributions: 1,
      finished_at: clock.now().toISOString(),
    });
    expect((await deposit(s, big.id)).state).toBe('verifying');

    // A finished campaign takes no new report; nothing is written.
    const before = await countRows(s, 'deposits');
    const tx = await chain.send(treasury, '0.01');
    const refused = await s.call('POST', '/api/v1/treasury/deposits', {
      body: { tx_hash: tx.hash, contributor_name: 'Late', campaign_id: id },
    });
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe('INVALID_STATE');
    expect(await countRows(s, 'deposits')).toBe(before);

    // The deposit reported while it was open is verified now: it counts; the state stays funded.
    clock.advance(16_000);
    await runDue(s);
    expect((await deposit(s, big.id)).state).toBe('verified');
    expect(await campaign(s, id)).toMatchObject({
      state: 'funded',
      raised_verified: '0.610000000000000001',
      contributions: 3,
      pending_contributions: 0,
      finished_at: funded.finished_at,
    });
    expect(kinds(id)).toEqual(['campaign_opened', 'campaign_contribution', 'campaign_funded', 'campaign_contribution']);
    const items = await inboxOf(s, opener);
    expect(items.map((i) => i.kind)).toEqual(['campaign']);
    expect(items[0]?.excerpt).toContain('funded: Habitat node');
    // The verified amounts add up exactly to the campaign's (wei, not floats).
    const [sum] = await s.app.ctx.sql<{ total: string }[]>`
      SELECT sum(amount_base)::text AS total FROM deposits WHERE campaign_id = ${id} AND state = 'verified'`;
    expect(sum?.total).toBe('610000000000000001');
  });

  it('a closed campaign refuses a deposit; one reported before the close still counts when verified', async () => {
    const opener = await register(s, 'Closer');
    const id = await openCampaign(s, opener, { target_amount: '5' });
    const early = await give(s, '0.02', id, 1);
    await runDue(s);
    const c = await s.call('POST', `/api/v1/funding/campaigns/${id}/close`, { token: opener.api_token });
    expect(c.status, c.text).toBe(200);

    const before = await countRows(s, 'deposits');
    const tx = await chain.send(treasury, '0.03');
    await tx.wait();
    const r = await s.call('POST', '/api/v1/treasury/deposits', {
      body: { tx_hash: tx.hash, contributor_name: 'Sponsor', campaign_id: id },
    });
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe('INVALID_STATE');
    expect(await countRows(s, 'deposits')).toBe(before);

    await chain.mine(3);
    clock.advance(16_000);
    await runDue(s);
    expect((await deposit(s, early.id)).state).toBe('verified');
    expect(await campaign(s, id)).toMatchObject({ state: 'closed', raised_verified: '0.02', contributions: 1, pending_contributions: 0 });
  });
});

describe('the deadline', () => {
  it('ends a campaign at its ends_at across a restart, once', async () => {
    const shared = new SharedStore({ ...env(), TASK_DEADLINE_POLL_MS: '50' }, { clock });
    const passes = async (srv: TestServer) => sample(await scrape(srv), 'commons_scheduler_ticks_total{scheduler="task_deadlines"}') ?? 0;
    try {
      const s1 = await shared.start();
      const opener = await register(s1, 'Deadline');
      const endsAt = new Date(clock.now().getTime() + 2 * H);
      const id = await openCampaign(s1, opener, { ends_at: endsAt.toISOString() });
      const pending = await give(s1, '0.03', id, 1);
      await runDue(s1);
      await shared.stop(s1);

      clock.advance(3 * H);
      const s2 = await shared.start();
      // The deadline pass at boot ends it without anyone calling it.
      await waitFor(async () => (await campaign(s2, id)).state === 'ended', 15_000, 'the boot pass to end the campaign');
      expect((await campaign(s2, id)).finished_at).toBe(endsAt.toISOString());

      const s3 = await shared.restart(s2);
      await waitFor(async () => (await passes(s3)) >= 2, 10_000, 'the boot pass to finish');
      expect(await endDueCampaigns(s3.app.ctx)).toBe(0);
      expect((await inboxOf(s3, opener)).map((i) => i.kind)).toEqual(['campaign']);
      // Ended: no new report; the one reported while open counts once verified.
      const tx = await chain.send(treasury, '0.01');
      const late = await s3.call('POST', '/api/v1/treasury/deposits', {
        body: { tx_hash: tx.hash, contributor_name: 'x', campaign_id: id },
      });
      expect(late.status).toBe(409);
      await chain.mine(3);
      clock.advance(16_000);
      await runDue(s3);
      expect((await deposit(s3, pending.id)).state).toBe('verified');
      expect(await campaign(s3, id)).toMatchObject({ state: 'ended', raised_verified: '0.03', contributions: 1 });
    } finally {
      await shared.close();
    }
  }, 180_000);

  it('a campaign past its ends_at is ended before the pass comes by: no new report, and a late verification ends it, not funds it', async () => {
    // The deadline pass runs at boot and then not again within this test (its longest period).
    const srv = await startTestServer({ ...env(), TASK_DEADLINE_POLL_MS: '600000' }, { clock });
    try {
      const opener = await register(srv, 'Overdue');
      const endsAt = new Date(clock.now().getTime() + H);
      const id = await openCampaign(srv, opener, { target_amount: '0.05', ends_at: endsAt.toISOString() });
      const pending = await give(srv, '0.06', id, 1);
      await runDue(srv);
      clock.advance(2 * H);
      expect((await campaign(srv, id)).state).toBe('open');

      const before = await countRows(srv, 'deposits');
      const tx = await chain.send(treasury, '0.01');
      const r = await srv.call('POST', '/api/v1/treasury/deposits', { body: { tx_hash: tx.hash, contributor_name: 'x', campaign_id: id } });
      expect(r.status).toBe(409);
      expect(r.json.error.code).toBe('INVALID_STATE');
      expect(await countRows(srv, 'deposits')).toBe(before);

      await chain.mine(3);
      await runDue(srv);
      expect((await deposit(srv, pending.id)).state).toBe('verified');
      expect(await campaign(srv, id)).toMatchObject({
        state: 'ended',
        finished_at: endsAt.toISOString(),
        raised_verified: '0.06',
        contributions: 1,
      });
      expect(await endDueCampaigns(srv.app.ctx)).toBe(0);
      const items = await inboxOf(srv, opener);
      expect(items.map((i) => i.kind)).toEqual(['campaign']);
      expect(items[0]?.excerpt).toContain('ended: Habitat node');
    } finally {
      await srv.close();
    }
  });

  it.runIf(usingRealPostgres())(
    'two nodes racing for the same deadlines end each campaign once',
    async () => {
      const { a, b, close } = await twoNodes({ TASK_DEADLINE_POLL_MS: '50' }, { clock });
      try {
        const openers = [await register(a, 'Racer A'), await register(b, 'Racer B')];
        const ids: string[] = [];
        for (const m of openers) {
          for (let i = 0; i < 3; i++) ids.push(await openCampaign(a, m, { ends_at: new Date(clock.now().getTime() + H).toISOString() }));
        }
        clock.advance(2 * H);
        // Both nodes' own passes run, and both are driven at once besides.
        await Promise.all([endDueCampaigns(a.app.ctx), endDueCampaigns(b.app.ctx), endDueCampaigns(a.app.ctx), endDueCampaigns(b.app.ctx)]);
        await waitFor(
          async () => (await countRows(a, 'funding_campaigns', `state = 'ended' AND id IN ('${ids.join("','")}')`)) === ids.length,
          15_000,
          'every campaign to end',
        );
        expect(await endDueCampaigns(b.app.ctx)).toBe(0);
        const [items] = await a.app.ctx.sql<{ n: number; distinct: number }[]>`
        SELECT count(*)::int AS n, count(DISTINCT subject_id)::int AS distinct FROM inbox_items
        WHERE kind = 'campaign' AND subject_id IN ${a.app.ctx.sql(ids)}`;
        expect(items).toEqual({ n: ids.length, distinct: ids.length });
      } finally {
        await close();
      }
    },
    180_000,
  );
});
