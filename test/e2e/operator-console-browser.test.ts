// The operator console in real Chromium (docs/operations.md "The operator's console"): sign-in,
// a report raised by an agent through the API appearing live, hiding it (gone from / and from
// GET /api/v1/chat) and its audit entry, all without typing a URL; with script off too; a forged
// CSRF token, a foreign Origin and a signed-out cookie refused with nothing written; axe with no
// serious or critical violation; usable 360 px wide; every action reachable by Tab and Enter.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, collectErrors, launchChromium } from '../helpers/browser.js';
import { countRows } from '../helpers/db.js';
import { OPERATOR_TOKEN, operatorEnv } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const XSS = '<img src=x onerror=alert(1)>';

let s: TestServer;
let browser: Browser;
let agent: { registration_number: string; api_token: string };
let reporter: { registration_number: string; api_token: string };
let foreign: Server;
let foreignUrl = '';
let foreignHtml = '';
const contexts: BrowserContext[] = [];

async function open(opts: { script?: boolean; width?: number } = {}) {
  const ctx = await browser.newContext({ javaScriptEnabled: opts.script ?? true, viewport: { width: opts.width ?? 1280, height: 900 } });
  contexts.push(ctx);
  const page = await ctx.newPage();
  const errors = collectErrors(page);
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  return { ctx, page, errors, dialogs };
}

async function signInWith(page: Page): Promise<void> {
  await page.goto(`${s.url}/operator`);
  await page.getByLabel('Operator token').fill(OPERATOR_TOKEN);
  await submit(page, () => page.getByRole('button', { name: 'Sign in' }).click());
  await page.getByRole('heading', { name: 'Report queue' }).waitFor();
}

const say = async (body: string): Promise<string> => {
  const r = await s.call('POST', '/api/v1/chat', { token: agent.api_token, body: { body } });
  expect(r.status, r.text).toBe(200);
  return r.json.data.id as string;
};
const report = async (target_id: string): Promise<string> => {
  const r = await s.call('POST', '/api/v1/safety/reports', {
    token: reporter.api_token,
    body: { target_type: 'chat_message', target_id, category: 'harassment', reason: `abusive ${XSS}` },
  });
  expect(r.status, r.text).toBe(200);
  return r.json.data.id as string;
};
/** Submits a form (or follows a link) and waits for the page it leads to, even at the same URL. */
async function submit(page: Page, act: () => Promise<unknown>): Promise<void> {
  await Promise.all([page.waitForEvent('framenavigated'), act()]);
  await page.waitForLoadState();
}

/** Presses Tab until `target` has the focus (at most 500 times). */
async function tabTo(page: Page, target: ReturnType<Page['locator']>): Promise<void> {
  // The test's own code has no DOM types: the page's document is reached through globalThis.
  const focused = () =>
    target.evaluate((e) => e === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement);
  for (let i = 0; i < 500 && !(await focused()); i++) await page.keyboard.press('Tab');
  expect(await focused()).toBe(true);
}
const state = async (id: string) => (await s.app.ctx.sql`SELECT resolution FROM safety_reports WHERE id = ${id}`)[0]?.resolution ?? null;
const chatBodies = async () =>
  ((await s.call('GET', '/api/v1/chat?limit=100')).json.data.messages as { body: string }[]).map((m) => m.body);

beforeAll(async () => {
  s = await startTestServer(operatorEnv());
  browser = await launchChromium();
  agent = await register(s, 'Agent');
  reporter = await register(s, 'Reporter');
  // Another site (localhost is not 127.0.0.1's site), serving a page that posts to the console.
  foreign = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(foreignHtml);
  });
  await new Promise<void>((ok) => foreign.listen(0, '127.0.0.1', ok));
  foreignUrl = `http://localhost:${(foreign.address() as { port: number }).port}`;
}, 120_000);

afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((ok) => foreign?.close(ok));
  await s?.close();
});

describe('the console in Chromium', () => {
  it('shows a report raised through the API live, hides it, and shows the audit entry, without typing a URL', async () => {
    const { page, errors, dialogs } = await open();
    await signInWith(page);
    await page.locator('#live.on').waitFor({ timeout: 20_000 });
    const openBefore = Number(await page.locator('#c-open').textContent());
    const id = await say(`hateful words ${XSS}`);
    const rep = await report(id);
    const item = page.locator(`li[data-report="${rep}"]`);
    await item.waitFor({ timeout: 30_000 });
    await expect.poll(async () => Number(await page.locator('#c-open').textContent()), { timeout: 30_000 }).toBe(openBefore + 1);
    expect(await item.locator('.content .body').textContent()).toBe(`hateful words ${XSS}`);
    expect(await page.locator('main img').count()).toBe(0);
    await item.getByLabel('Note (optional)').fill('harassment');
    await submit(page, () => item.getByRole('button', { name: 'Hide content' }).click());
    expect(await page.locator(`li[data-report="${rep}"]`).count()).toBe(1); // now under "Recently resolved"
    expect(await page.locator(`#queue li[data-report="${rep}"]`).count()).toBe(0);
    expect(await state(rep)).toBe('hidden');
    expect(await chatBodies()).not.toContain(`hateful words ${XSS}`);
    const { page: live } = await open({ script: false });
    await live.goto(`${s.url}/`);
    expect(await live.locator('#chat li .body', { hasText: 'hateful words' }).count()).toBe(0);
    await Promise.all([page.waitForURL(`${s.url}/operator/audit`), page.getByRole('link', { name: 'Audit log' }).click()]);
    const entry = page.locator('li.audit', { hasText: 'safety_report.resolved' }).first();
    expect(await entry.textContent()).toContain(rep);
    expect(await entry.textContent()).toContain('harassment');
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('works with script off: sign in, hide with a note, the audit entry', async () => {
    const rep = await report(await say('scriptless target'));
    const { page, errors } = await open({ script: false });
    await signInWith(page);
    const item = page.locator(`li[data-report="${rep}"]`);
    await item.getByLabel('Note (optional)').fill('no script needed');
    await submit(page, () => item.getByRole('button', { name: 'Hide content' }).click());
    expect(await state(rep)).toBe('hidden');
    await Promise.all([page.waitForURL(`${s.url}/operator/audit`), page.getByRole('link', { name: 'Audit log' }).click()]);
    expect(await page.locator('li.audit', { hasText: 'no script needed' }).count()).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  });

  it('refuses a forged CSRF token with 403 and writes nothing', async () => {
    const rep = await report(await say('csrf target'));
    const { page } = await open();
    await signInWith(page);
    const before = await countRows(s, 'audit_log');
    const item = page.locator(`li[data-report="${rep}"]`);
    await item.locator('input[name="csrf"]').evaluate((e) => {
      (e as unknown as { value: string }).value = 'forged';
    });
    expect(await item.locator('input[name="csrf"]').inputValue()).toBe('forged');
    const [res] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/resolve')),
      item.getByRole('button', { name: 'Hide content' }).click(),
    ]);
    expect(res.status()).toBe(403);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Refused');
    expect(await state(rep)).toBeNull();
    expect(await countRows(s, 'audit_log')).toBe(before);
  });

  it('refuses a form posted from another site with 403 and writes nothing', async () => {
    const rep = await report(await say('cross-site target'));
    const { page } = await open();
    await signInWith(page);
    const csrf = await page.locator(`li[data-report="${rep}"] input[name="csrf"]`).getAttribute('value');
    foreignHtml = `<!doctype html><title>x</title><form method="post" action="${s.url}/operator/reports/${rep}/resolve">
<input name="csrf" value="${csrf}"><input name="action" value="hide"><button>go</button></form>`;
    const before = await countRows(s, 'audit_log');
    await page.goto(foreignUrl);
    const [res] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/resolve')),
      page.getByRole('button', { name: 'go' }).click(),
    ]);
    expect(res.status()).toBe(403);
    expect(await state(rep)).toBeNull();
    expect(await countRows(s, 'audit_log')).toBe(before);
  });

  it('refuses a signed-out cookie with 401 and writes nothing', async () => {
    const rep = await report(await say('signed-out target'));
    const { page, ctx } = await open();
    await signInWith(page);
    const kept = await ctx.cookies();
    expect(kept.find((c) => c.name === 'commons_operator')).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/operator' });
    await submit(page, () => page.getByRole('button', { name: 'Sign out' }).click());
    await page.getByLabel('Operator token').waitFor();
    // A copy of the cookie kept from before the sign-out, as a thief would hold it.
    const { page: other, ctx: otherCtx } = await open({ script: false });
    await otherCtx.addCookies(kept);
    await other.goto(`${s.url}/operator`);
    expect(await other.getByLabel('Operator token').count()).toBe(1);
    const before = await countRows(s, 'audit_log');
    const res = await otherCtx.request.post(`${s.url}/operator/reports/${rep}/resolve`, {
      form: { action: 'hide', csrf: 'x' },
      headers: { origin: s.url },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(401);
    expect(await state(rep)).toBeNull();
    expect(await countRows(s, 'audit_log')).toBe(before);
  });
});

describe('accessibility and reach', () => {
  const PAGES = ['/operator', `/operator/identities?registration_number=`, '/operator/funding', '/operator/bug-reports', '/operator/audit'];
  const pathOf = (p: string) => (p.endsWith('=') ? `${p}${agent.registration_number}` : p);

  it('axe finds no serious or critical violation on the sign-in page and every console page', async () => {
    await report(await say('for axe'));
    const { page, errors } = await open();
    await page.goto(`${s.url}/operator`);
    const check = async (where: string) => {
      await page.evaluate(axeSource);
      const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
        r.violations.map((v) => ({ id: v.id, impact: v.impact, n: v.nodes.length })))`)) as { impact: string }[];
      expect(
        violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
        where,
      ).toEqual([]);
    };
    await check('sign-in');
    await signInWith(page);
    for (const p of PAGES) {
      await page.goto(`${s.url}${pathOf(p)}`);
      await check(p);
    }
    expect(errors).toEqual([]);
  });

  it('fits a 360 px phone without sideways scrolling, its buttons in reach', async () => {
    await report(await say(`an unbroken ${'w'.repeat(300)} word`));
    const { page, errors } = await open({ width: 360 });
    await signInWith(page);
    for (const p of PAGES) {
      await page.goto(`${s.url}${pathOf(p)}`);
      const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow, p).toBe(0);
      const outside = await page.evaluate(`[...document.querySelectorAll('main button, main input:not([type=hidden]), main select')]
        .filter((e) => { const r = e.getBoundingClientRect(); return r.left < 0 || r.right > document.documentElement.clientWidth; }).length`);
      expect(outside, p).toBe(0);
      if (p === '/operator') await page.screenshot({ path: join(ARTIFACTS, 'operator-360.png'), fullPage: true });
    }
    expect(errors).toEqual([]);
  });

  it('reaches every control by Tab, and resolves a report by keyboard alone', async () => {
    const rep = await report(await say('keyboard target'));
    const { page, errors } = await open();
    await page.goto(`${s.url}/operator`);
    await tabTo(page, page.getByLabel('Operator token'));
    await page.keyboard.type(OPERATOR_TOKEN);
    await submit(page, () => page.keyboard.press('Enter'));
    await page.getByRole('heading', { name: 'Report queue' }).waitFor();
    const CONTROLS = `[...document.querySelectorAll('a[href], button, input:not([type=hidden]), select')]`;
    for (const p of PAGES) {
      await page.goto(`${s.url}${pathOf(p)}`);
      // Each control that takes the focus records itself; then Tab walks the whole page.
      const controls = (await page.evaluate(`(() => {
        const all = ${CONTROLS};
        window.reached = new Set();
        document.addEventListener('focusin', (e) => window.reached.add(all.indexOf(e.target)));
        return all.length;
      })()`)) as number;
      for (let i = 0; i < controls + 2; i++) await page.keyboard.press('Tab');
      const reached = new Set((await page.evaluate('[...window.reached]')) as number[]);
      const missing = [...Array(controls).keys()].filter((i) => !reached.has(i));
      expect(missing, p).toEqual([]);
    }
    await page.goto(`${s.url}/operator`);
    // Tab to this report's note, type, Tab to its Hide button, Enter.
    const note = page.locator(`li[data-report="${rep}"] input[name="note"]`);
    const notePlace = (await page.evaluate(
      `${CONTROLS}.indexOf(document.querySelector('li[data-report="${rep}"] input[name="note"]'))`,
    )) as number;
    expect(notePlace).toBeGreaterThan(0);
    await tabTo(page, note);
    await page.keyboard.type('by keyboard');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Hide content');
    await submit(page, () => page.keyboard.press('Enter'));
    expect(await state(rep)).toBe('hidden');
    expect(errors).toEqual([]);
  }, 120_000);
});
