// A campaign's bar on the page for people, in real Chromium against a real local chain (docs/page.md,
// docs/treasury.md "Campaigns"): the first paint shows open campaigns with a <progress> and its text,
// and the bar moves live, without reload, when a deposit reported for the campaign is verified on
// chain; a funded campaign leaves the open list.
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositVerifierOf } from '../../src/actors/deposit-verifier.js';
import { collectErrors, launchChromium } from '../helpers/browser.js';
import { CHAIN_ID, type Chain, startChain } from '../helpers/ganache.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';

let chain: Chain;
let treasury: string;
let s: TestServer;
let browser: Browser;
let ctx: BrowserContext;
const clock = new TestClock(Date.parse('2026-04-01T00:00:00Z'));

beforeAll(async () => {
  chain = await startChain();
  treasury = await chain.deployTreasury();
  s = await startTestServer(
    { TREASURY_ETH_ADDRESS: treasury, ETH_RPC_URL: chain.url, ETH_CHAIN_ID: String(CHAIN_ID), ETH_MIN_CONFIRMATIONS: '2' },
    { clock },
  );
  browser = await launchChromium();
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
}, 120_000);
afterAll(async () => {
  await ctx?.close();
  await browser?.close();
  await s?.close();
  await chain?.close();
});

/** A real transfer with enough confirmations, reported for the campaign and verified now. */
async function giveAndVerify(eth: string, campaign: string): Promise<void> {
  const tx = await chain.send(treasury, eth);
  await tx.wait();
  await chain.mine(2);
  const r = await s.call('POST', '/api/v1/treasury/deposits', {
    body: { tx_hash: tx.hash, contributor_name: 'Sponsor', campaign_id: campaign },
  });
  expect(r.status, r.text).toBe(200);
  await depositVerifierOf(s.app)?.runDue();
  expect((await s.call('GET', `/api/v1/treasury/deposits/${r.json.data.id}`)).json.data.state).toBe('verified');
}

describe('campaign bars on the page', () => {
  it('are painted by the server and move live as verified deposits count', async () => {
    const opener = await register(s, 'Opener');
    const r = await s.call('POST', '/api/v1/funding/campaigns', {
      token: opener.api_token,
      body: { title: 'Habitat <b>node</b>', purpose: 'A node.', asset: 'ETH', target_amount: '0.2' },
    });
    expect(r.status, r.text).toBe(200);
    const id = r.json.data.id as string;

    const page = await ctx.newPage();
    const errors = collectErrors(page);
    await page.goto(`${s.url}/`);
    const item = page.locator(`#campaigns li[data-campaign="${id}"]`);
    const bar = item.locator('progress');
    // First paint: the title as text, the bar at 0 with its accessible name and the words beside it.
    expect(await item.locator('.title').textContent()).toBe('Habitat <b>node</b>');
    expect(await bar.getAttribute('value')).toBe('0');
    expect(await bar.getAttribute('aria-label')).toBe('Habitat <b>node</b>: 0% raised');
    expect(await item.locator('.line').textContent()).toBe('0 of 0.2 ETH verified (0%), 0 verified, 0 pending');
    await page.locator('#live.on').waitFor({ timeout: 10_000 });

    await giveAndVerify('0.05', id);
    await expect.poll(() => bar.getAttribute('value'), { timeout: 5_000 }).toBe('25');
    expect(await item.locator('.line').textContent()).toBe('0.05 of 0.2 ETH verified (25%), 1 verified, 0 pending');
    expect(await bar.getAttribute('aria-label')).toBe('Habitat <b>node</b>: 25% raised');

    // Funded: it leaves the list of open campaigns.
    await giveAndVerify('0.15', id);
    await item.waitFor({ state: 'detached', timeout: 5_000 });
    expect(await page.locator('#campaigns li.empty').textContent()).toBe('No open campaigns.');
    expect(await page.locator('main b').count()).toBe(0);
    expect(errors).toEqual([]);
  });
});
