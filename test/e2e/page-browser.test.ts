// The page for people in real Chromium (DECISIONS.md "The page for people"): first paint without
// script, live updates over the stream, agent text as text, no console errors, reconnection with
// `since` after a drop, pause while hidden, no serious accessibility violation, no overflow on a
// phone, and screenshots at 1280 and 375 px in test-artifacts/.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, collectErrors, type DropProxy, dropProxy, launchChromium } from '../helpers/browser.js';
import { OPERATOR_TOKEN as OP } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

const XSS = '<img src=x onerror=alert(1)>';
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let s: TestServer;
let proxy: DropProxy;
let browser: Browser;
let ada: { registration_number: string; api_token: string };
const contexts: BrowserContext[] = [];

async function open(opts: { script?: boolean; width?: number; scheme?: 'light' | 'dark' } = {}) {
  const ctx = await browser.newContext({
    javaScriptEnabled: opts.script ?? true,
    viewport: { width: opts.width ?? 1280, height: 900 },
    colorScheme: opts.scheme ?? 'light',
  });
  contexts.push(ctx);
  const page = await ctx.newPage();
  const errors = collectErrors(page);
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  return { page, errors, dialogs };
}

const chatBodies = (page: Page) => page.locator('#chat li .body').allTextContents();
const count = async (page: Page, key: string) => Number(await page.locator(`[data-count="${key}"]`).textContent());
const isLive = (page: Page) => page.locator('#live.on').waitFor({ timeout: 10_000 });
const say = async (body: string, token?: string): Promise<string> => {
  const r = await s.call('POST', '/api/v1/chat', { body: { body, name: 'Guest' }, ...(token ? { token } : {}) });
  expect(r.status, r.text).toBe(200);
  return r.json.data.id as string;
};

beforeAll(async () => {
  s = await startTestServer({ OPERATOR_TOKEN: OP });
  proxy = await dropProxy(new URL(s.url));
  browser = await launchChromium();
  ada = await register(s, 'Ada');
  expect((await s.call('POST', '/api/v1/habitat/heartbeat', { token: ada.api_token, body: { status_note: 'reading' } })).status).toBe(200);
  await say('Good morning, commons.', ada.api_token);
  await say(XSS);
  // One unbroken 240-character word: it must wrap, not widen the page on a phone.
  await say(`unbroken-${'w'.repeat(230)}`);
  const t = await s.call('POST', '/api/v1/habitat/tasks', {
    token: ada.api_token,
    body: { title: 'Summarise the open chat of the week', body: 'Details.', reward_points: 8 },
  });
  expect(t.status, t.text).toBe(200);
  // An open campaign, so its bar is checked too (accessibility, phones).
  const c = await s.call('POST', '/api/v1/funding/campaigns', {
    token: ada.api_token,
    body: { title: `A dedicated habitat node for the residents ${XSS}`, purpose: 'Hosting.', asset: 'ETH', target_amount: '1.5' },
  });
  expect(c.status, c.text).toBe(200);
}, 120_000);

afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
});

afterAll(async () => {
  await browser?.close();
  await proxy?.close();
  await s?.close();
});

describe('the page in Chromium', () => {
  it('first paint with script off shows the seeded counts and messages', async () => {
    const { page, errors } = await open({ script: false });
    await page.goto(`${proxy.url}/`);
    expect(await count(page, 'members')).toBe(1);
    expect(await count(page, 'residents_online')).toBe(1);
    expect(await count(page, 'open_tasks')).toBe(1);
    expect(await count(page, 'messages_today')).toBeGreaterThanOrEqual(2);
    const bodies = await chatBodies(page);
    expect(bodies).toContain('Good morning, commons.');
    expect(bodies).toContain(XSS);
    expect(await page.locator('#present').textContent()).toContain('Ada');
    expect(await page.locator('#tasks').textContent()).toContain('Summarise the open chat of the week');
    expect(await page.locator('#campaigns progress').getAttribute('aria-label')).toBe(
      `A dedicated habitat node for the residents ${XSS}: 0% raised`,
    );
    expect(await page.locator('#live').textContent()).toContain('snapshot');
    expect(errors).toEqual([]);
  });

  it('with script on, a REST message appears within 2 s without reload; presence and counts move', async () => {
    const { page, errors, dialogs } = await open();
    await page.goto(`${proxy.url}/`);
    await isLive(page);
    const navigations: string[] = [];
    page.on('framenavigated', (f) => navigations.push(f.url()));
    const messages = await count(page, 'messages_today');
    const chatBox = await page.locator('#chat-box').boundingBox();
    const sent = Date.now();
    await say('live from REST');
    await page.locator('#chat li .body', { hasText: 'live from REST' }).waitFor({ timeout: 2_000 });
    expect(Date.now() - sent).toBeLessThan(2_000);
    // The count moves with the message: it reaches what the server counts now (one more than at
    // load, unless a replayed message also arrived after the baseline was read).
    const today = (await s.call('GET', '/api/v1/page')).json.data.counts.messages_today as number;
    expect(today).toBeGreaterThan(messages);
    await expect.poll(() => count(page, 'messages_today'), { timeout: 2_000 }).toBe(today);
    // No layout jump: the chat keeps its box as messages arrive.
    for (let i = 0; i < 12; i++) await say(`filler ${i}`);
    await page.locator('#chat li .body', { hasText: 'filler 11' }).waitFor({ timeout: 5_000 });
    expect(await page.locator('#chat-box').boundingBox()).toEqual(chatBox);
    // Newest at the bottom, and the box rests there: the newest message is in view.
    const newest = await page.locator('#chat li').last().boundingBox();
    expect(newest && chatBox && newest.y + newest.height <= chatBox.y + chatBox.height + 1).toBe(true);

    const grace = await register(s, 'Grace');
    expect((await s.call('POST', '/api/v1/habitat/heartbeat', { token: grace.api_token, body: {} })).status).toBe(200);
    await page.locator('#present li', { hasText: 'Grace' }).waitFor({ timeout: 5_000 });
    await expect.poll(() => count(page, 'residents_online'), { timeout: 5_000 }).toBe(2);
    await expect.poll(() => count(page, 'members'), { timeout: 5_000 }).toBe(2);
    expect(navigations).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('shows agent markup as text and runs none of it', async () => {
    const { page, errors, dialogs } = await open();
    await page.goto(`${proxy.url}/`);
    await isLive(page);
    await say(`${XSS} live`);
    const live = page.locator('#chat li .body', { hasText: `${XSS} live` });
    await live.waitFor({ timeout: 5_000 });
    expect(await live.textContent()).toBe(`${XSS} live`);
    expect(await page.locator('#chat img, main img').count()).toBe(0);
    expect(await page.locator('#chat li .body', { hasText: XSS }).count()).toBe(2);
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('reconnects after the stream is dropped and misses nothing (since)', async () => {
    const { page, errors } = await open();
    await page.goto(`${proxy.url}/`);
    await isLive(page);
    proxy.hold(true);
    proxy.drop();
    await page.locator('#live:not(.on)').waitFor({ timeout: 5_000 });
    await say('sent while you were away');
    proxy.hold(false);
    await page.locator('#chat li .body', { hasText: 'sent while you were away' }).waitFor({ timeout: 20_000 });
    await isLive(page);
    await say('and after');
    await page.locator('#chat li .body', { hasText: 'and after' }).waitFor({ timeout: 5_000 });
    expect((await chatBodies(page)).filter((b) => b === 'sent while you were away')).toHaveLength(1);
    // The browser logs the refused reconnection attempts and a refresh caught by the drop, the
    // latter with whichever network error the drop's timing gives (seen: EMPTY_RESPONSE,
    // CONNECTION_RESET/CLOSED/REFUSED, SOCKET_NOT_CONNECTED on a loaded machine); nothing else may
    // appear: no script error, no CSP violation, no HTTP error status.
    const dropped = /^WebSocket connection to .* failed|^Failed to load resource: net::ERR_[A-Z_]+$/;
    expect(errors.filter((e) => !dropped.test(e))).toEqual([]);
  });

  it('pauses the stream while the tab is hidden and catches up when shown', async () => {
    const { page, errors } = await open();
    await page.goto(`${proxy.url}/`);
    await isLive(page);
    const before = s.app.stream.sessionCount();
    // Headless Chromium never hides a tab: the page is told so the way a browser would.
    const setHidden = (hidden: boolean) =>
      page.evaluate(`(() => {
        Object.defineProperty(document, 'hidden', { configurable: true, get: () => ${hidden} });
        Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => '${hidden ? 'hidden' : 'visible'}' });
        document.dispatchEvent(new Event('visibilitychange'));
      })()`);
    await setHidden(true);
    await expect.poll(() => s.app.stream.sessionCount(), { timeout: 5_000 }).toBe(before - 1);
    expect(await page.locator('#live').textContent()).toContain('Paused');
    await say('while hidden');
    await setHidden(false);
    await page.locator('#chat li .body', { hasText: 'while hidden' }).waitFor({ timeout: 5_000 });
    expect(errors).toEqual([]);
  });

  it('drops a message the operator hid at its next refresh', async () => {
    const { page, errors } = await open();
    await page.goto(`${proxy.url}/`);
    await isLive(page);
    const id = await say('soon to be hidden');
    const item = page.locator('#chat li .body', { hasText: 'soon to be hidden' });
    await item.waitFor({ timeout: 5_000 });
    const hide = await s.call('POST', '/api/v1/operator/hide', {
      token: OP,
      body: { target_type: 'chat_message', target_id: id, reason: 'test' },
    });
    expect(hide.status, hide.text).toBe(200);
    // A presence event makes the page refresh.
    const bob = await register(s, 'Bob');
    expect((await s.call('POST', '/api/v1/habitat/heartbeat', { token: bob.api_token, body: {} })).status).toBe(200);
    await item.waitFor({ state: 'detached', timeout: 5_000 });
    expect(await page.locator('#chat li .body', { hasText: 'live from REST' }).count()).toBe(1);
    expect(errors).toEqual([]);
  });

  it('axe finds no serious or critical violation, light and dark, on both pages', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      for (const path of ['/', '/api/v1/habitat/guide']) {
        const { page, errors } = await open({ scheme });
        await page.goto(`${proxy.url}${path}`);
        if (path === '/') await isLive(page);
        await page.evaluate(axeSource);
        const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
          r.violations.map((v) => ({ id: v.id, impact: v.impact, n: v.nodes.length })))`)) as { id: string; impact: string; n: number }[];
        const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        expect(bad, `${scheme} ${path}`).toEqual([]);
        expect(errors).toEqual([]);
      }
    }
  });

  it('fits 360 and 375 px phones without sideways scrolling, and writes screenshots', async () => {
    for (const width of [360, 375, 1280]) {
      for (const [path, name] of [
        ['/', 'page'],
        ['/api/v1/habitat/guide', 'guide'],
      ] as const) {
        const { page, errors } = await open({ width });
        await page.goto(`${proxy.url}${path}`);
        if (path === '/') await isLive(page);
        const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        expect(overflow, `${name} at ${width}px`).toBe(0);
        if (width !== 360) await page.screenshot({ path: join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
        expect(errors).toEqual([]);
      }
    }
  });
});
