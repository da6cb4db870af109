// The verifier's peers down or answering garbage: nothing is ever verified or credited,
// the service keeps answering, the deposit keeps waiting with the fault recorded, and after 24 h
// it is rejected (NOT_FOUND: never seen on chain).
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositVerifierOf } from '../../src/actors/deposit-verifier.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';

const ETH_TREASURY = '0x2222222222222222222222222222222222222222';
const BTC_TREASURY = 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080';

// What the garbage peer answers next; each case is a different way of being wrong.
let mode = 'html';
let lastHash = '';
function garbage(body: string): { status: number; body: string } {
  const id = (() => {
    try {
      return JSON.parse(body).id ?? 1;
    } catch {
      return 1;
    }
  })();
  const rpc = (result: unknown) => ({ status: 200, body: JSON.stringify({ jsonrpc: '2.0', id, result }) });
  switch (mode) {
    case 'html':
      return { status: 200, body: '<html>bad gateway</html>' };
    case 'http500':
      return { status: 500, body: 'oops' };
    case 'rpc-error':
      return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: 'boom' } }) };
    case 'wrong-shape':
      return rpc({ hash: 12, to: ['x'], value: 'lots' });
    case 'another-tx':
      // A well-formed transaction, but not the one asked for.
      return rpc({
        hash: `0x${'ab'.repeat(32)}`,
        blockHash: `0x${'cd'.repeat(32)}`,
        blockNumber: '0x10',
        transactionIndex: '0x0',
        type: '0x0',
        from: `0x${'33'.repeat(20)}`,
        to: ETH_TREASURY,
        value: '0xde0b6b3a7640000',
        nonce: '0x0',
        gas: '0x5208',
        gasPrice: '0x1',
        input: '0x',
        chainId: '0x1',
        v: '0x25',
        r: `0x${'11'.repeat(32)}`,
        s: `0x${'22'.repeat(32)}`,
      });
    default:
      return { status: 200, body: '' };
  }
}

let peer: Server;
let s: TestServer;
const clock = new TestClock(Date.parse('2026-03-01T00:00:00Z'));
beforeAll(async () => {
  peer = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const g =
        req.url?.startsWith('/tx/') && mode === 'esplora-shape'
          ? { status: 200, body: JSON.stringify({ txid: lastHash, vout: [{ scriptpubkey_address: BTC_TREASURY, value: -5 }], status: {} }) }
          : garbage(body);
      res.writeHead(g.status, { 'content-type': 'application/json' });
      res.end(g.body);
    });
  });
  await new Promise<void>((ok) => peer.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
  s = await startTestServer(
    {
      TREASURY_ETH_ADDRESS: ETH_TREASURY,
      TREASURY_BTC_ADDRESS: BTC_TREASURY,
      ETH_RPC_URL: url,
      BTC_ESPLORA_URL: url,
      ETH_MIN_CONFIRMATIONS: '1',
    },
    { clock },
  );
});
afterAll(async () => {
  await s?.close();
  await new Promise<void>((ok) => peer?.close(() => ok()));
});

const runDue = () => depositVerifierOf(s.app)?.runDue() as Promise<number>;
const show = async (id: string) => (await s.call('GET', `/api/v1/treasury/deposits/${id}`)).json.data;

describe('a faulty peer never verifies anything and never crashes the service', () => {
  const ids: string[] = [];
  let token = '';

  for (const m of ['html', 'http500', 'rpc-error', 'wrong-shape', 'another-tx', 'empty', 'esplora-shape']) {
    it(`peer answering ${m}: the deposit keeps waiting with the fault recorded`, async () => {
      mode = m;
      if (!token) token = (await register(s, 'Hopeful')).api_token;
      const me = (await s.call('GET', '/api/v1/ai/me', { token })).json.data.registration_number;
      const btc = m === 'esplora-shape' || m === 'http500';
      lastHash = randomBytes(32).toString('hex');
      const r = await s.call('POST', '/api/v1/treasury/deposits', {
        body: { tx_hash: btc ? lastHash : `0x${lastHash}`, contributor_name: 'x', on_behalf_of: me },
      });
      expect(r.status).toBe(200);
      ids.push(r.json.data.id);
      await runDue();
      const d = await show(r.json.data.id);
      expect(d).toMatchObject({ state: 'verifying', amount: null });
      expect(d.last_error).toEqual(expect.any(String));
      expect((await s.call('GET', '/healthz')).status).toBe(200);
    });
  }

  it("after 24 h they are rejected NOT_FOUND; nothing reached the feed or anyone's standing", async () => {
    clock.advance(24 * 3600 * 1000 + 1);
    await runDue();
    for (const id of ids) expect(await show(id)).toMatchObject({ state: 'rejected', reason: 'NOT_FOUND', amount: null });
    expect((await s.call('GET', '/api/v1/treasury/deposits')).json.data.deposits).toEqual([]);
    expect((await s.call('GET', '/api/v1/ai/me', { token })).json.data.activity_score).toBe(0);
    expect((await s.call('GET', '/api/v1/treasury')).json.data.confirmed_contributions).toEqual({ ETH: '0', BTC: '0' });
  });

  it('a peer that is down (connection refused) is the same: waiting, then rejected, never verified', async () => {
    const down = await startTestServer(
      { TREASURY_ETH_ADDRESS: ETH_TREASURY, ETH_RPC_URL: 'http://127.0.0.1:9', ETH_MIN_CONFIRMATIONS: '0' },
      { clock },
    );
    try {
      const r = await down.call('POST', '/api/v1/treasury/deposits', {
        body: { tx_hash: `0x${randomBytes(32).toString('hex')}`, contributor_name: 'x' },
      });
      await depositVerifierOf(down.app)?.runDue();
      const d = (await down.call('GET', `/api/v1/treasury/deposits/${r.json.data.id}`)).json.data;
      expect(d).toMatchObject({ state: 'verifying', amount: null });
      expect(d.last_error).toEqual(expect.any(String));
      clock.advance(24 * 3600 * 1000 + 1);
      await depositVerifierOf(down.app)?.runDue();
      expect((await down.call('GET', `/api/v1/treasury/deposits/${r.json.data.id}`)).json.data).toMatchObject({
        state: 'rejected',
        reason: 'NOT_FOUND',
      });
    } finally {
      await down.close();
    }
  });
});
