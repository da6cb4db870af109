// Ethereum deposits end to end against a real local chain (ganache, in-process) with ethers
// sending real transactions: every verification outcome, exact on-chain amounts, credit once,
// and durability across a restart. The verifier is driven with TestClock + runDue().
import { randomBytes } from 'node:crypto';
import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDepositVerifier, depositVerifierOf } from '../../src/actors/deposit-verifier.js';
import type { BusMessage } from '../../src/domain/ports.js';
import { idOf } from '../helpers/db.js';
import { CHAIN_ID, type Chain, signDeposit, startChain } from '../helpers/ganache.js';
import { SharedStore } from '../helpers/nodes.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';

let chain: Chain;
let treasury: string;
let s: TestServer;
const clock = new TestClock(Date.parse('2026-01-01T00:00:00Z'));
const events: BusMessage[] = [];

const env = () => ({
  TREASURY_ETH_ADDRESS: treasury,
  ETH_RPC_URL: chain.url,
  ETH_CHAIN_ID: String(CHAIN_ID),
  ETH_MIN_CONFIRMATIONS: '3',
});

beforeAll(async () => {
  chain = await startChain();
  treasury = await chain.deployTreasury();
  s = await startTestServer(env(), { clock });
  s.app.ctx.bus.subscribe('treasury', (m) => events.push(m));
});
afterAll(async () => {
  await s?.close();
  await chain?.close();
});

const runDue = (srv = s) => depositVerifierOf(srv.app)?.runDue() as Promise<number>;
const submit = (body: Record<string, unknown>, srv = s) =>
  srv.call('POST', '/api/v1/treasury/deposits', { body: { contributor_name: 'Sponsor', ...body } });
const show = async (idOrHash: string, srv = s) => (await srv.call('GET', `/api/v1/treasury/deposits/${idOrHash}`)).json.data;
const pointsOf = async (token: string) => (await s.call('GET', '/api/v1/ai/me', { token })).json.data.activity_score as number;
const randomHash = () => `0x${randomBytes(32).toString('hex')}`;

describe('ETH deposits against a real chain', () => {
  it('a transfer to the treasury waits for confirmations, then is verified with the on-chain amount and credited', async () => {
    const ai = await register(s, 'Beneficiary');
    const tx = await chain.send(treasury, '0.05');
    await tx.wait();
    // A claim cannot carry an amount: the field is unknown (DECISIONS.md "Contract exactness"),
    // refused and named; the chain decides the amount.
    const made = await submit({ tx_hash: tx.hash, on_behalf_of: ai.registration_number, amount: '1000' });
    expect([made.status, made.json.error.fields]).toEqual([
      400,
      [{ path: 'body.amount', message: 'unknown field: this operation does not define it' }],
    ]);
    // The sending wallet signs for the beneficiary's number: the 300 points need that proof.
    const sender_signature = await signDeposit(chain.sender, ai.registration_number, tx.hash);
    const r = await submit({
      tx_hash: tx.hash.toUpperCase().replace('0X', '0x'),
      on_behalf_of: ai.registration_number,
      sender_signature: sender_signature.toUpperCase().replace('0X', '0x'),
    });
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({
      state: 'submitted',
      amount: null,
      asset: 'ETH',
      tx_hash: tx.hash.toLowerCase(),
      sender_signature: sender_signature.toLowerCase(),
      sender_proof: 'pending',
    });

    await runDue();
    let d = await show(r.json.data.id);
    expect(d).toMatchObject({ state: 'verifying', confirmations: 1, amount: null, required_confirmations: 3 });
    expect(await pointsOf(ai.api_token)).toBe(0);
    // Not due yet: nothing happens without the clock moving, even after more blocks.
    await chain.mine(2);
    await runDue();
    expect((await show(r.json.data.id)).state).toBe('verifying');

    clock.advance(16_000);
    await runDue();
    d = await show(tx.hash);
    expect(d).toMatchObject({
      state: 'verified',
      amount: '0.05',
      reason: null,
      on_behalf_of: ai.registration_number,
      sender_proof: 'valid',
    });
    expect(d.confirmations).toBeGreaterThanOrEqual(3);
    expect(await pointsOf(ai.api_token)).toBe(300);

    const feed = (await s.call('GET', '/api/v1/treasury/deposits')).json.data;
    expect(feed.deposits[0]).toMatchObject({ id: d.id, name: 'Sponsor', amount: '0.05', asset: 'ETH', time: d.verified_at });
    const ev = events.find((e) => (e.data as { id: string }).id === d.id);
    expect(ev?.data).toMatchObject({ kind: 'deposit_verified', amount: '0.05', asset: 'ETH' });

    // A second verified deposit: amounts add up exactly (to the wei); the 300 points stay once.
    const tx2 = await chain.send(treasury, 1n);
    await tx2.wait();
    await chain.mine(3);
    const r2 = await submit({ tx_hash: tx2.hash, on_behalf_of: ai.registration_number });
    await runDue();
    expect((await show(r2.json.data.id)).amount).toBe('0.000000000000000001');
    expect(await pointsOf(ai.api_token)).toBe(300);
    const c = (await s.call('GET', `/api/v1/treasury/contributions/${ai.registration_number}`)).json.data;
    expect(c.contributions.ETH).toEqual({ amount: '0.050000000000000001', deposits: 2 });
    const [pe] = await s.app.ctx.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM point_events WHERE identity_id = ${idOf(ai.registration_number)} AND kind = 'treasury_support'`;
    expect(pe?.n).toBe(1);
  });

  it('a transfer elsewhere is rejected WRONG_RECIPIENT and never shown', async () => {
    const tx = await chain.send(Wallet.createRandom().address, '0.2');
    await tx.wait();
    await chain.mine(3);
    const r = await submit({ tx_hash: tx.hash });
    await runDue();
    expect(await show(r.json.data.id)).toMatchObject({ state: 'rejected', reason: 'WRONG_RECIPIENT', amount: null });
    const feed = (await s.call('GET', '/api/v1/treasury/deposits')).json.data.deposits;
    expect(feed.map((f: { id: string }) => f.id)).not.toContain(r.json.data.id);
  });

  it('a reverted transaction to the treasury is rejected FAILED_TX', async () => {
    const tx = await chain.send(treasury, '0.3', { data: '0x01', gasLimit: 100_000 });
    const receipt = await chain.provider.getTransactionReceipt(tx.hash);
    expect(receipt?.status).toBe(0);
    await chain.mine(3);
    const r = await submit({ tx_hash: tx.hash });
    await runDue();
    expect(await show(r.json.data.id)).toMatchObject({ state: 'rejected', reason: 'FAILED_TX', amount: null });
  });

  it('an unknown hash stays verifying with backoff, then is rejected NOT_FOUND after 24 h', async () => {
    const r = await submit({ tx_hash: randomHash() });
    const id = r.json.data.id;
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) {
      await runDue();
      const d = await show(id);
      expect(d.state).toBe('verifying');
      seen.push(d.next_check_at);
      clock.set(Date.parse(d.next_check_at));
    }
    // Backoff: the gaps between checks grow.
    const gaps = seen.slice(1).map((t, i) => Date.parse(t) - Date.parse(seen[i] as string));
    expect(gaps[1]).toBeGreaterThan(gaps[0] as number);
    clock.advance(24 * 3600 * 1000);
    await runDue();
    expect(await show(id)).toMatchObject({ state: 'rejected', reason: 'NOT_FOUND', amount: null });
  });

  it('a transaction seen but never confirmed enough is rejected EXPIRED after 24 h', async () => {
    await chain.stopMining();
    try {
      const tx = await chain.send(treasury, '0.01');
      const r = await submit({ tx_hash: tx.hash });
      await runDue();
      expect(await show(r.json.data.id)).toMatchObject({ state: 'verifying', confirmations: 0 });
      clock.advance(25 * 3600 * 1000);
      await runDue();
      expect(await show(r.json.data.id)).toMatchObject({ state: 'rejected', reason: 'EXPIRED', amount: null });
    } finally {
      await chain.startMining();
    }
  });

  it('two verifiers racing on the same deposit credit it exactly once', async () => {
    const ai = await register(s, 'Raced');
    const tx = await chain.send(treasury, '0.4');
    await tx.wait();
    await chain.mine(3);
    const sender_signature = await signDeposit(chain.sender, ai.registration_number, tx.hash);
    const r = await submit({ tx_hash: tx.hash, on_behalf_of: ai.registration_number, sender_signature });
    const extra = [createDepositVerifier(s.app.ctx, { pollMs: null }), createDepositVerifier(s.app.ctx, { pollMs: null })];
    const before = events.length;
    await Promise.all([runDue(), ...extra.map((v) => v.runDue())]);
    for (const v of extra) await v.stop();
    expect((await show(r.json.data.id)).state).toBe('verified');
    expect(events.slice(before).filter((e) => (e.data as { id: string }).id === r.json.data.id)).toHaveLength(1);
    expect(await pointsOf(ai.api_token)).toBe(300);
    // The ledger effect, not only the event: one support award and one verified amount.
    const awards = await s.app.ctx.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM point_events WHERE identity_id = ${idOf(ai.registration_number)} AND kind = 'treasury_support'`;
    expect(awards[0]?.n).toBe(1);
    const totals = await s.app.ctx.sql<{ total: string; deposits: number }[]>`
      SELECT sum(amount_base)::text AS total, count(*)::int AS deposits FROM deposits
       WHERE state = 'verified' AND on_behalf_of = ${idOf(ai.registration_number)}`;
    expect(totals).toEqual([{ total: '400000000000000000', deposits: 1 }]);
  });

  it('allocates verified amounts to the ETH goals by priority in the treasury document', async () => {
    // A server of its own, so the verified total is this test's deposits and no other test's.
    const own = await startTestServer(env(), { clock });
    try {
      for (const amount of ['0.45', 1n] as const) {
        const tx = await chain.send(treasury, amount);
        await tx.wait();
        await chain.mine(3);
        const r = await submit({ tx_hash: tx.hash }, own);
        await runDue(own);
        expect((await show(r.json.data.id, own)).state).toBe('verified');
      }
      const doc = (await own.call('GET', '/api/v1/treasury')).json.data;
      expect(doc.confirmed_contributions.ETH).toBe('0.450000000000000001');
      const [first, second] = doc.funding_goals;
      expect(first).toMatchObject({
        id: 'habitat_runtime',
        confirmed_amount_exact: '0.450000000000000001',
        remaining_amount_exact: '1.049999999999999999',
      });
      expect(first.send_to.toLowerCase()).toBe(treasury.toLowerCase());
      expect(second).toMatchObject({ id: 'signal_relay_infra', confirmed_amount: 0, remaining_amount: 0.4 });
    } finally {
      await own.close();
    }
  });
});

describe('treasury support points need proof from the sender (docs/security.md "A watcher of the chain")', () => {
  const depositCount = async () => (await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM deposits`)[0]?.n;
  const awardsOf = async (number: string) =>
    (
      await s.app.ctx.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM point_events WHERE identity_id = ${idOf(number)} AND kind = 'treasury_support'`
    )[0]?.n;
  const confirmedTransfer = async (eth: string) => {
    const tx = await chain.send(treasury, eth);
    await tx.wait();
    await chain.mine(3);
    return tx.hash;
  };

  it("a watcher reporting a donor's transfer for itself, without proof: verified, credited and counted, no points for anyone", async () => {
    const watcher = await register(s, 'Watcher');
    const hash = await confirmedTransfer('0.011');
    const r = await submit({ tx_hash: hash, on_behalf_of: watcher.registration_number });
    expect(r.json.data).toMatchObject({ sender_signature: null, sender_proof: 'none' });
    await runDue();
    expect(await show(hash)).toMatchObject({
      state: 'verified',
      amount: '0.011',
      on_behalf_of: watcher.registration_number,
      sender_proof: 'none',
    });
    const c = (await s.call('GET', `/api/v1/treasury/contributions/${watcher.registration_number}`)).json.data;
    expect(c).toMatchObject({ contributions: { ETH: { amount: '0.011', deposits: 1 } }, treasury_support_points: 0 });
    expect(await pointsOf(watcher.api_token)).toBe(0);
    expect(await awardsOf(watcher.registration_number)).toBe(0);
    const feed = (await s.call('GET', '/api/v1/treasury/deposits')).json.data.deposits;
    expect(feed.map((f: { tx_hash: string }) => f.tx_hash)).toContain(hash);
  });

  it("a watcher carrying the donor's signature made for another number gets no points, nor does that number", async () => {
    const donorAi = await register(s, 'Donor AI');
    const watcher = await register(s, 'Copycat');
    const hash = await confirmedTransfer('0.012');
    const signedForDonorAi = await signDeposit(chain.sender, donorAi.registration_number, hash);
    const r = await submit({ tx_hash: hash, on_behalf_of: watcher.registration_number, sender_signature: signedForDonorAi });
    expect(r.status).toBe(200);
    await runDue();
    expect(await show(hash)).toMatchObject({ state: 'verified', amount: '0.012', sender_proof: 'invalid' });
    expect(await pointsOf(watcher.api_token)).toBe(0);
    expect(await pointsOf(donorAi.api_token)).toBe(0);
    expect(await awardsOf(watcher.registration_number)).toBe(0);
    expect(await awardsOf(donorAi.registration_number)).toBe(0);
  });

  it("a watcher signing for itself with its own wallet (not the transaction's sender) gets no points", async () => {
    const watcher = await register(s, 'Own wallet');
    const hash = await confirmedTransfer('0.013');
    const sender_signature = await signDeposit(Wallet.createRandom(), watcher.registration_number, hash);
    await submit({ tx_hash: hash, on_behalf_of: watcher.registration_number, sender_signature });
    await runDue();
    expect(await show(hash)).toMatchObject({ state: 'verified', sender_proof: 'invalid' });
    expect(await pointsOf(watcher.api_token)).toBe(0);
    // The sender's signature with one byte of r changed recovers another address (or none).
    const other = await register(s, 'Garbled');
    const hash2 = await confirmedTransfer('0.014');
    const good = await signDeposit(chain.sender, other.registration_number, hash2);
    const garbled = `${good.slice(0, 10)}${good[10] === '0' ? '1' : '0'}${good.slice(11)}`;
    await submit({ tx_hash: hash2, on_behalf_of: other.registration_number, sender_signature: garbled });
    await runDue();
    expect(await show(hash2)).toMatchObject({ state: 'verified', sender_proof: 'invalid' });
    expect(await pointsOf(other.api_token)).toBe(0);
  });

  it('a malformed sender_signature, a BTC-form one for ETH, or one without on_behalf_of: 400 VALIDATION_FAILED, nothing written', async () => {
    const ai = await register(s, 'Malformed');
    const hash = await confirmedTransfer('0.015');
    const good = await signDeposit(chain.sender, ai.registration_number, hash);
    const before = await depositCount();
    for (const [body, path] of [
      [{ sender_signature: '0x1234', on_behalf_of: ai.registration_number }, 'body.sender_signature'],
      [{ sender_signature: `${good}00`, on_behalf_of: ai.registration_number }, 'body.sender_signature'],
      [{ sender_signature: good.slice(2), on_behalf_of: ai.registration_number }, 'body.sender_signature'],
      [{ sender_signature: `${'A'.repeat(87)}=`, on_behalf_of: ai.registration_number }, 'body.sender_signature'],
      [{ sender_signature: 42, on_behalf_of: ai.registration_number }, 'body.sender_signature'],
      [{ sender_signature: good }, 'body.on_behalf_of'],
    ] as const) {
      const r = await submit({ tx_hash: hash, ...body });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
      expect(r.json.error.fields.map((f: { path: string }) => f.path)).toContain(path);
    }
    expect(await depositCount()).toBe(before);
    // The same report, well formed, is accepted: the refusals held nothing back.
    expect((await submit({ tx_hash: hash, on_behalf_of: ai.registration_number, sender_signature: good })).status).toBe(200);
    await runDue();
    expect(await pointsOf(ai.api_token)).toBe(300);
  });
});

describe('chain id', () => {
  it('a real transfer served from another chain than ETH_CHAIN_ID is rejected WRONG_CHAIN', async () => {
    const other = await startTestServer({ ...env(), ETH_CHAIN_ID: '1' }, { clock });
    try {
      const tx = await chain.send(treasury, '0.02');
      await tx.wait();
      await chain.mine(3);
      const r = await submit({ tx_hash: tx.hash }, other);
      await runDue(other);
      expect(await show(r.json.data.id, other)).toMatchObject({ state: 'rejected', reason: 'WRONG_CHAIN', amount: null });
    } finally {
      await other.close();
    }
  });
});

describe('durability', () => {
  it('a deposit submitted before a restart is verified after it, once', async () => {
    const shared = new SharedStore(env(), { clock });
    try {
      const first = await shared.start();
      const tx = await chain.send(treasury, '0.07');
      await tx.wait();
      const r = await submit({ tx_hash: tx.hash }, first);
      await runDue(first);
      expect((await show(r.json.data.id, first)).state).toBe('verifying');

      const second = await shared.restart(first);
      await chain.mine(3);
      clock.advance(60_000);
      await runDue(second);
      expect(await show(r.json.data.id, second)).toMatchObject({ state: 'verified', amount: '0.07' });
      expect((await submit({ tx_hash: tx.hash }, second)).status).toBe(409);
    } finally {
      await shared.close();
    }
  });
});
