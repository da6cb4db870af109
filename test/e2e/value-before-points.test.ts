// Value before points (DECISIONS.md "Scores and badges"), on a real local Ethereum chain (ganache)
// and the Esplora-protocol stand-in (real signed regtest transactions): a deposit below
// TREASURY_SUPPORT_MIN_ETH / _BTC (0 wei, 1 wei, just under) with the sender's valid proof, on
// behalf of a member and naming a campaign, verifies and adds its exact amount, and gives no points
// and no contribution; at the minimum it earns the 300 points once and counts once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositVerifierOf } from '../../src/actors/deposit-verifier.js';
import { countRows, idOf } from '../helpers/db.js';
import { bip137Sign, EsploraStandIn, newKey } from '../helpers/esplora.js';
import { CHAIN_ID, type Chain, signDeposit, startChain } from '../helpers/ganache.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';

let chain: Chain;
let esplora: EsploraStandIn;
let s: TestServer;
let ethTreasury: string;
const btcTreasury = newKey().address;
const clock = new TestClock(Date.parse('2026-04-01T00:00:00Z'));

beforeAll(async () => {
  chain = await startChain();
  esplora = new EsploraStandIn();
  ethTreasury = await chain.deployTreasury();
  s = await startTestServer(
    {
      TREASURY_ETH_ADDRESS: ethTreasury,
      ETH_RPC_URL: chain.url,
      ETH_CHAIN_ID: String(CHAIN_ID),
      ETH_MIN_CONFIRMATIONS: '3',
      TREASURY_BTC_ADDRESS: btcTreasury,
      BTC_ESPLORA_URL: await esplora.start(),
      BTC_MIN_CONFIRMATIONS: '2',
    },
    { clock },
  );
});
afterAll(async () => {
  await s?.close();
  await chain?.close();
  await esplora?.close();
});

type Member = { registration_number: string; api_token: string };
const runDue = () => depositVerifierOf(s.app)?.runDue() as Promise<number>;
const scoreOf = async (m: Member) => (await s.call('GET', '/api/v1/ai/me', { token: m.api_token })).json.data.activity_score as number;
const awardsOf = (m: Member) => countRows(s, 'point_events', `identity_id = ${idOf(m.registration_number)} AND kind = 'treasury_support'`);
const campaign = async (id: string) => (await s.call('GET', `/api/v1/funding/campaigns/${id}`)).json.data;
const deposit = async (hash: string) => (await s.call('GET', `/api/v1/treasury/deposits/${hash}`)).json.data;

/** One report: the sender's valid proof for `z`, naming `campaignId`; verified before returning. */
async function report(hash: string, signature: string, z: Member, campaignId: string) {
  const r = await s.call('POST', '/api/v1/treasury/deposits', {
    body: {
      tx_hash: hash,
      contributor_name: 'Sponsor',
      on_behalf_of: z.registration_number,
      sender_signature: signature,
      campaign_id: campaignId,
    },
  });
  expect(r.status, r.text).toBe(200);
  await runDue();
  return deposit(hash);
}

async function openFor(asset: 'ETH' | 'BTC', target: string): Promise<{ opener: Member; id: string }> {
  const opener = await register(s, `${asset} opener`);
  const r = await s.call('POST', '/api/v1/funding/campaigns', {
    token: opener.api_token,
    body: { title: `${asset} node`, purpose: 'A node of our own.', asset, target_amount: target },
  });
  expect(r.status, r.text).toBe(200);
  return { opener, id: r.json.data.id };
}

it('the documents say the minimum', async () => {
  const doc = (await s.call('GET', '/api/v1/treasury')).json.data;
  expect(doc.support_minimum).toMatchObject({ ETH: '0.001', BTC: '0.00005', points: 300 });
  expect(doc.contribution_rules.join(' ')).toContain('0.001 ETH or 0.00005 BTC');
  expect(doc.campaigns.rules.join(' ')).toContain('0.001 ETH, 0.00005 BTC');
  const { id } = await openFor('BTC', '1');
  expect((await campaign(id)).minimum_contribution).toBe('0.00005');
  const earn = (await s.call('GET', '/api/v1/earn')).json.data;
  const support = earn.ways_to_earn_standing.find((w: { event: string }) => w.event === 'treasury_support');
  expect(support.how).toContain('at least 0.001 ETH or 0.00005 BTC');
  const openapi = JSON.stringify((await s.call('GET', '/api/openapi.json')).json);
  expect(openapi).toContain('support_minimum');
  expect(openapi).toContain('minimum_contribution');
});

describe('ETH on a local chain', () => {
  it('0 wei, 1 wei and 1 wei under 0.001 ETH: verified, amount added, no points, no contribution; 0.001 ETH: 300 points once, one contribution', async () => {
    const z = await register(s, 'ETH beneficiary');
    const { opener, id } = await openFor('ETH', '1');
    const send = async (wei: bigint) => {
      const tx = await chain.send(ethTreasury, wei);
      await tx.wait();
      await chain.mine(3);
      return report(tx.hash, await signDeposit(chain.sender, z.registration_number, tx.hash), z, id);
    };
    const under = 10n ** 15n - 1n;
    const cases: [bigint, string, string][] = [
      [0n, '0', '0'],
      [1n, '0.000000000000000001', '0.000000000000000001'],
      [under, '0.000999999999999999', '0.001'],
    ];
    for (const [wei, amount, raised] of cases) {
      const d = await send(wei);
      expect(d, String(wei)).toMatchObject({ state: 'verified', amount, sender_proof: 'valid', campaign_id: id });
      expect(await scoreOf(z), String(wei)).toBe(0);
      expect(await awardsOf(z)).toBe(0);
      expect(await campaign(id)).toMatchObject({ contributions: 0, raised_verified: raised, pending_contributions: 0 });
    }
    const c = (await s.call('GET', `/api/v1/treasury/contributions/${z.registration_number}`)).json.data;
    expect(c).toMatchObject({ contributions: { ETH: { amount: '0.001', deposits: 3 } }, treasury_support_points: 0 });

    expect(await send(10n ** 15n)).toMatchObject({ state: 'verified', amount: '0.001', sender_proof: 'valid' });
    expect(await scoreOf(z)).toBe(300);
    expect(await campaign(id)).toMatchObject({ contributions: 1, raised_verified: '0.002' });
    // Once per identity: a second deposit at the minimum counts for the campaign, not for the score.
    await send(10n ** 15n);
    expect(await scoreOf(z)).toBe(300);
    expect(await awardsOf(z)).toBe(1);
    expect(await campaign(id)).toMatchObject({ contributions: 2, raised_verified: '0.003' });
    // With counted contributions, closing it keeps the opener's 5 points.
    expect((await s.call('POST', `/api/v1/funding/campaigns/${id}/close`, { token: opener.api_token })).status).toBe(200);
    expect(await scoreOf(opener)).toBe(5);
  });
});

describe('BTC on the Esplora stand-in', () => {
  it('0 sat, 1 sat and 4,999 sat: verified, amount added, no points, no contribution; 5,000 sat: 300 points once, one contribution', async () => {
    const z = await register(s, 'BTC beneficiary');
    const { id } = await openFor('BTC', '1');
    const send = async (sat: bigint) => {
      const from = esplora.fund(1_000_000n);
      const txid = esplora.pay(from, [{ address: btcTreasury, value: sat }]);
      esplora.mine(2);
      return report(txid, bip137Sign(from.key, `commons-deposit:${z.registration_number}:${txid}`), z, id);
    };
    const cases: [bigint, string, string][] = [
      [0n, '0', '0'],
      [1n, '0.00000001', '0.00000001'],
      [4_999n, '0.00004999', '0.00005'],
    ];
    for (const [sat, amount, raised] of cases) {
      const d = await send(sat);
      expect(d, String(sat)).toMatchObject({ state: 'verified', amount, sender_proof: 'valid', campaign_id: id });
      expect(await scoreOf(z), String(sat)).toBe(0);
      expect(await awardsOf(z)).toBe(0);
      expect(await campaign(id)).toMatchObject({ contributions: 0, raised_verified: raised, pending_contributions: 0 });
    }
    expect(await send(5_000n)).toMatchObject({ state: 'verified', amount: '0.00005', sender_proof: 'valid' });
    expect(await scoreOf(z)).toBe(300);
    expect(await campaign(id)).toMatchObject({ contributions: 1, raised_verified: '0.0001' });
    await send(5_000n);
    expect(await scoreOf(z)).toBe(300);
    expect(await awardsOf(z)).toBe(1);
    expect(await campaign(id)).toMatchObject({ contributions: 2, raised_verified: '0.00015' });
  });

  it('a campaign funded by amounts below the minimum alone has no counted contribution: its opening points go back', async () => {
    const z = await register(s, 'Dust funder');
    const { opener, id } = await openFor('BTC', '0.00001');
    expect(await scoreOf(opener)).toBe(5);
    const from = esplora.fund(1_000_000n);
    const txid = esplora.pay(from, [{ address: btcTreasury, value: 1_000n }]);
    esplora.mine(2);
    await report(txid, bip137Sign(from.key, `commons-deposit:${z.registration_number}:${txid}`), z, id);
    expect(await campaign(id)).toMatchObject({ state: 'funded', contributions: 0, raised_verified: '0.00001' });
    expect(await scoreOf(opener)).toBe(0);
    expect(await scoreOf(z)).toBe(0);
  });
});
