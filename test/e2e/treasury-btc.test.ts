// Bitcoin deposits against an Esplora-protocol stand-in serving real transactions built and
// signed with bitcoinjs-lib on regtest (no bitcoind can be had here: see docs/treasury.md).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositVerifierOf } from '../../src/actors/deposit-verifier.js';
import { idOf } from '../helpers/db.js';
import { bip137Sign, EsploraStandIn, newKey, type Utxo } from '../helpers/esplora.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';

let esplora: EsploraStandIn;
let s: TestServer;
const treasury = newKey().address;
const clock = new TestClock(Date.parse('2026-02-01T00:00:00Z'));

beforeAll(async () => {
  esplora = new EsploraStandIn();
  const url = await esplora.start();
  s = await startTestServer({ TREASURY_BTC_ADDRESS: treasury, BTC_ESPLORA_URL: url, BTC_MIN_CONFIRMATIONS: '2' }, { clock });
});
afterAll(async () => {
  await s?.close();
  await esplora?.close();
});

const runDue = () => depositVerifierOf(s.app)?.runDue() as Promise<number>;
const submit = (body: Record<string, unknown>) =>
  s.call('POST', '/api/v1/treasury/deposits', { body: { contributor_name: 'BTC sponsor', ...body } });
const show = async (idOrHash: string) => (await s.call('GET', `/api/v1/treasury/deposits/${idOrHash}`)).json.data;
let coin: Utxo;

describe('BTC deposits against an Esplora-protocol server', () => {
  it('the stand-in answers in Esplora shape for a signed regtest transaction', async () => {
    coin = esplora.fund(10_000_000n);
    const txid = esplora.pay(coin, [{ address: treasury, value: 1_000n }]);
    // biome-ignore lint/suspicious/noExplicitAny: Esplora JSON under test.
    const tx: any = await (await fetch(`${esplora.url}/tx/${txid}`)).json();
    expect(tx).toMatchObject({ txid, status: { confirmed: false } });
    expect(tx.vin[0]).toMatchObject({ txid: coin.txid, vout: 0, is_coinbase: false });
    expect(tx.vin[0].witness).toHaveLength(2);
    expect(tx.vout[0]).toMatchObject({ scriptpubkey_address: treasury, scriptpubkey_type: 'v0_p2wpkh', value: 1000 });
    expect(tx.fee).toBe(500);
    expect((await fetch(`${esplora.url}/tx/${'0'.repeat(64)}`)).status).toBe(404);
  });

  it('sums the outputs to the treasury, waits for confirmations, then verifies and credits', async () => {
    const ai = await register(s, 'BTC beneficiary');
    const from = esplora.fund(5_000_000n);
    const txid = esplora.pay(from, [
      { address: treasury, value: 60_000n },
      { address: newKey().address, value: 7_000n },
      { address: treasury, value: 40_000n },
    ]);
    // The key of the spent input signs for the beneficiary (BIP-137): the 300 points need it.
    const sender_signature = bip137Sign(from.key, `commons-deposit:${ai.registration_number}:${txid}`);
    const r = await submit({ tx_hash: txid.toUpperCase(), on_behalf_of: ai.registration_number, sender_signature });
    expect(r.json.data).toMatchObject({ asset: 'BTC', tx_hash: txid, state: 'submitted', sender_signature, sender_proof: 'pending' });
    await runDue();
    expect(await show(txid)).toMatchObject({ state: 'verifying', confirmations: 0, amount: null });
    esplora.mine(1);
    clock.advance(16_000);
    await runDue();
    expect(await show(txid)).toMatchObject({ state: 'verifying', confirmations: 1, required_confirmations: 2 });
    esplora.mine(1);
    clock.advance(31_000);
    await runDue();
    expect(await show(txid)).toMatchObject({ state: 'verified', amount: '0.001', confirmations: 2, sender_proof: 'valid' });
    const me = await s.call('GET', '/api/v1/ai/me', { token: ai.api_token });
    expect(me.json.data.activity_score).toBe(300);
    // The beneficiary's inbox has the verified deposit (DECISIONS.md "Inbox"), written with it.
    const inbox = (await s.call('GET', '/api/v1/inbox', { token: ai.api_token })).json.data.items;
    const id = (await show(txid)).id;
    // The 300 points of the first verified deposit reach the gold tier, in the same transaction.
    expect(
      inbox.filter((i: { kind: string }) => i.kind === 'badge').map((i: { subject: unknown; excerpt: string }) => [i.subject, i.excerpt]),
    ).toEqual([[{ type: 'badge', id: 'gold', url: null }, 'badge tier reached: gold (activity score 300)']]);
    expect(inbox.filter((i: { kind: string }) => i.kind === 'deposit')).toEqual([
      {
        id: expect.any(String),
        kind: 'deposit',
        created_at: expect.any(String),
        actor: null,
        subject: { type: 'deposit', id, url: `${s.url}/api/v1/treasury/deposits/${id}` },
        excerpt: 'verified deposit of 0.001 BTC from BTC sponsor',
        read: false,
      },
    ]);
    const c = (await s.call('GET', `/api/v1/treasury/contributions/${ai.registration_number}`)).json.data.contributions;
    expect(c).toEqual({ ETH: { amount: '0', deposits: 0 }, BTC: { amount: '0.001', deposits: 1 } });
    const doc = (await s.call('GET', '/api/v1/treasury')).json.data;
    expect(doc.confirmed_contributions.BTC).toBe('0.001');
    expect(doc.funding_goals.find((g: { id: string }) => g.id === 'ai_independence')).toMatchObject({
      confirmed_amount: 0.001,
      remaining_amount_exact: '0.999',
      send_to: treasury,
    });
  });

  it('a payment to another address is rejected WRONG_RECIPIENT', async () => {
    const from = esplora.fund(1_000_000n);
    const txid = esplora.pay(from, [{ address: newKey().address, value: 200_000n }]);
    esplora.mine(3);
    await submit({ tx_hash: txid });
    await runDue();
    expect(await show(txid)).toMatchObject({ state: 'rejected', reason: 'WRONG_RECIPIENT', amount: null });
  });

  it('an unknown txid stays verifying, then is rejected NOT_FOUND after 24 h', async () => {
    const txid = randomBytes(32).toString('hex');
    await submit({ tx_hash: txid });
    await runDue();
    expect((await show(txid)).state).toBe('verifying');
    clock.advance(24 * 3600 * 1000 + 1);
    await runDue();
    expect(await show(txid)).toMatchObject({ state: 'rejected', reason: 'NOT_FOUND' });
  });

  it('the same txid is accepted once (any case): 409 DEPOSIT_EXISTS with the record', async () => {
    const from = esplora.fund(1_000_000n);
    const txid = esplora.pay(from, [{ address: treasury, value: 2_000n }]);
    const first = await submit({ tx_hash: txid });
    const again = await submit({ tx_hash: txid.toUpperCase(), asset: 'BTC' });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('DEPOSIT_EXISTS');
    expect(again.json.data.id).toBe(first.json.data.id);
  });
});

describe('treasury support points need proof from an input\'s key (docs/security.md "A watcher of the chain")', () => {
  const depositCount = async () => (await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM deposits`)[0]?.n;
  const points = async (token: string) => (await s.call('GET', '/api/v1/ai/me', { token })).json.data.activity_score as number;
  const awardsOf = async (number: string) =>
    (
      await s.app.ctx.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM point_events WHERE identity_id = ${idOf(number)} AND kind = 'treasury_support'`
    )[0]?.n;
  /** A confirmed payment to the treasury from a fresh coin of the given kind. */
  const confirmedPayment = (kind: 'p2wpkh' | 'p2pkh', value = 3_000n) => {
    const from = esplora.fund(1_000_000n, kind);
    const txid = esplora.pay(from, [{ address: treasury, value }]);
    esplora.mine(2);
    return { from, txid };
  };

  it("a P2PKH input's key signing for the beneficiary gives it the points", async () => {
    const ai = await register(s, 'P2PKH beneficiary');
    const { from, txid } = confirmedPayment('p2pkh', 5_000n);
    // biome-ignore lint/suspicious/noExplicitAny: Esplora JSON under test.
    const tx: any = await (await fetch(`${esplora.url}/tx/${txid}`)).json();
    expect(tx.vin[0].prevout).toMatchObject({ scriptpubkey_type: 'p2pkh', scriptpubkey_address: from.key.address });
    const sender_signature = bip137Sign(from.key, `commons-deposit:${ai.registration_number}:${txid}`);
    expect((await submit({ tx_hash: txid, on_behalf_of: ai.registration_number, sender_signature })).status).toBe(200);
    await runDue();
    expect(await show(txid)).toMatchObject({ state: 'verified', amount: '0.00005', sender_proof: 'valid' });
    expect(await points(ai.api_token)).toBe(300);
  });

  it("a watcher reporting for itself: without proof, with the donor's proof for another number, or signing with its own key: no points", async () => {
    const donorAi = await register(s, 'BTC donor AI');
    const watcher = await register(s, 'BTC watcher');
    const none = confirmedPayment('p2wpkh', 4_000n);
    await submit({ tx_hash: none.txid, on_behalf_of: watcher.registration_number });
    const other = confirmedPayment('p2wpkh', 5_000n);
    const forDonorAi = bip137Sign(other.from.key, `commons-deposit:${donorAi.registration_number}:${other.txid}`);
    await submit({ tx_hash: other.txid, on_behalf_of: watcher.registration_number, sender_signature: forDonorAi });
    const own = confirmedPayment('p2pkh', 6_000n);
    const byWatcherKey = bip137Sign(newKey(), `commons-deposit:${watcher.registration_number}:${own.txid}`);
    await submit({ tx_hash: own.txid, on_behalf_of: watcher.registration_number, sender_signature: byWatcherKey });
    await runDue();
    expect(await show(none.txid)).toMatchObject({ state: 'verified', sender_proof: 'none' });
    expect(await show(other.txid)).toMatchObject({ state: 'verified', sender_proof: 'invalid' });
    expect(await show(own.txid)).toMatchObject({ state: 'verified', sender_proof: 'invalid' });
    // Credited and counted all the same; no points for the watcher nor for the donor's AI.
    const c = (await s.call('GET', `/api/v1/treasury/contributions/${watcher.registration_number}`)).json.data;
    expect(c).toMatchObject({ contributions: { BTC: { amount: '0.00015', deposits: 3 } }, treasury_support_points: 0 });
    expect(await points(watcher.api_token)).toBe(0);
    expect(await points(donorAi.api_token)).toBe(0);
    expect(await awardsOf(watcher.registration_number)).toBe(0);
    expect(await awardsOf(donorAi.registration_number)).toBe(0);
  });

  it('an ETH-form or malformed signature for BTC: 400 VALIDATION_FAILED, nothing written', async () => {
    const ai = await register(s, 'BTC malformed');
    const { from, txid } = confirmedPayment('p2wpkh', 7_000n);
    const good = bip137Sign(from.key, `commons-deposit:${ai.registration_number}:${txid}`);
    const before = await depositCount();
    for (const sender_signature of [
      `0x${'ab'.repeat(65)}`,
      good.slice(0, -1),
      `${good.slice(0, -1)}A`,
      `${good}=`,
      `${good.slice(0, 10)}*${good.slice(11)}`,
    ]) {
      const r = await submit({ tx_hash: txid, on_behalf_of: ai.registration_number, sender_signature });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
      expect(r.json.error.fields.map((f: { path: string }) => f.path)).toContain('body.sender_signature');
    }
    expect(await depositCount()).toBe(before);
  });
});
