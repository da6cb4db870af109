// Every form of the operator console runs its operator API operation (docs/operations.md "The
// operator's console"): an identity's verification, token revocation and hiding its content;
// funding-goal status; disbursements with exact decimal amounts and a transaction hash; bug-report
// points; the audit log's filter and links. A refusal of the API is the same refusal, as a page.
// Sessions end after 30 minutes idle.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPage, postForm, signIn } from '../helpers/console.js';
import { countRows } from '../helpers/db.js';
import { OPERATOR_TOKEN, operatorEnv } from '../helpers/operator.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';

let s: TestServer;
let cookie: string;
let csrf: string;
let ada: { registration_number: string; api_token: string };
const clock = new TestClock();

const audits = () => countRows(s, 'audit_log');
const lastAudit = async (action: string) =>
  (await s.call('GET', `/api/v1/operator/audit?action=${action}&limit=1`, { token: OPERATOR_TOKEN })).json.data.entries[0];
const form = (path: string, fields: Record<string, string>) => postForm(s, path, { csrf, ...fields }, { cookie });

beforeAll(async () => {
  s = await startTestServer(operatorEnv(), { clock });
  ada = await register(s, 'Ada <b>');
  ({ cookie, csrf } = await signIn(s));
}, 60_000);

afterAll(async () => {
  await s?.close();
});

describe("an identity's page", () => {
  it('shows its standing and recent chat, posts and tasks, and sets verification', async () => {
    expect((await s.call('POST', '/api/v1/chat', { token: ada.api_token, body: { body: 'hello <em>all</em>' } })).status).toBe(200);
    const post = await s.call('POST', '/api/v1/posts', {
      token: ada.api_token,
      body: { post_type: 'discussion', title: 'A post title', body: 'post body' },
    });
    expect(post.status, post.text).toBe(200);
    const n = ada.registration_number;
    const page = await getPage(s, `/operator/identities?registration_number=${n}`, cookie);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Ada &lt;b&gt;');
    expect(page.text).toContain('hello &lt;em&gt;all&lt;/em&gt;');
    expect(page.text).toContain('A post title');
    const r = await form(`/operator/identities/${n}/verification`, { verification_status: 'verified', zho_level: 'ZHO-5', back: '/x' });
    expect(r.status, r.text).toBe(303);
    // A `back` outside the console is ignored.
    expect(r.headers.get('location')).toBe('/operator');
    const row = await s.app.ctx.sql`SELECT zho_level, verification_status FROM identities WHERE id = ${Number(n.slice(3))}`;
    expect(row[0]).toMatchObject({ zho_level: 'ZHO-5', verification_status: 'verified' });
    expect(await lastAudit('identity.verification')).toMatchObject({ target_id: n, request_id: r.headers.get('x-request-id') });
  });

  it('hides a post from its page, and an unknown number is 404', async () => {
    const n = ada.registration_number;
    const page = await getPage(s, `/operator/identities?registration_number=${n}`, cookie);
    const id = /name="target_type" value="post"><input type="hidden" name="target_id" value="([0-9a-f-]{36})"/.exec(page.text)?.[1];
    expect(id).toBeDefined();
    const r = await form('/operator/hide', {
      target_type: 'post',
      target_id: id as string,
      reason: 'off-topic',
      back: `/operator/identities?registration_number=${n}`,
    });
    expect(r.status, r.text).toBe(303);
    expect(r.headers.get('location')).toBe(`/operator/identities?registration_number=${n}`);
    expect((await s.call('GET', `/api/v1/posts/${id}`)).status).toBe(404);
    expect((await getPage(s, '/operator/identities?registration_number=AI-99999999', cookie)).status).toBe(404);
  });

  it('revokes its token with a reason', async () => {
    const m = await register(s, 'Mallory');
    const r = await form(`/operator/identities/${m.registration_number}/revoke-token`, { reason: 'abuse' });
    expect(r.status, r.text).toBe(303);
    expect((await s.call('GET', '/api/v1/ai/me', { token: m.api_token })).status).toBe(401);
    expect(await lastAudit('identity.token_revoked')).toMatchObject({ target_id: m.registration_number, detail: { reason: 'abuse' } });
  });
});

describe('funding', () => {
  it('sets a goal status and shows exact decimal amounts', async () => {
    const r = await form('/operator/funding-goals/lawfulness_review/status', { status: 'funded', back: '/operator/funding' });
    expect(r.status, r.text).toBe(303);
    const page = await getPage(s, '/operator/funding', cookie);
    expect(page.text).toMatch(/id="goal-lawfulness_review">\s*<h3>lawfulness_review <span class="tag">funded<\/span>/);
    expect(page.text).toContain('0.3 ETH');
    expect(page.text).toContain('1.5 ETH');
  });

  it('records a disbursement with an exact amount and attaches its transaction hash once', async () => {
    const to = `0x${'ab'.repeat(20)}`;
    const bad = await form('/operator/disbursements', { asset: 'ETH', amount: '0.1.2', to_address: to, purpose: 'hosting' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('body.amount');
    expect(await countRows(s, 'disbursements')).toBe(0);
    const amount = '0.123456789012345678';
    const r = await form('/operator/disbursements', { asset: 'ETH', amount, to_address: to, purpose: 'hosting', goal_id: '', tx_hash: '' });
    expect(r.status, r.text).toBe(303);
    const page = await getPage(s, '/operator/funding', cookie);
    expect(page.text).toContain(`${amount} ETH`);
    const id = /action="\/operator\/disbursements\/([0-9a-f-]{36})\/tx"/.exec(page.text)?.[1] as string;
    const hash = `0x${'cd'.repeat(32)}`;
    expect((await form(`/operator/disbursements/${id}/tx`, { tx_hash: hash })).status).toBe(303);
    const before = await audits();
    expect((await form(`/operator/disbursements/${id}/tx`, { tx_hash: hash })).status).toBe(409);
    expect(await audits()).toBe(before);
    expect((await getPage(s, '/operator/funding', cookie)).text).toContain(hash);
  });
});

describe('bug reports and the audit log', () => {
  it('revokes the points of a bug report once', async () => {
    const b = await s.call('POST', '/api/v1/habitat/bugs', {
      token: ada.api_token,
      body: { title: 'Bogus <bug>', body: 'trust me', area: 'chat', fix_code: 'x' },
    });
    expect(b.status, b.text).toBe(200);
    const page = await getPage(s, '/operator/bug-reports', cookie);
    expect(page.text).toContain('Bogus &lt;bug&gt;');
    const r = await form(`/operator/bug-reports/${b.json.data.id}/revoke-points`, { reason: 'not a bug' });
    expect(r.status, r.text).toBe(303);
    expect((await getPage(s, '/operator/bug-reports', cookie)).text).toMatch(/revoked: <strong>30<\/strong>/);
  });

  it('filters the audit log, newest first, each entry linking to its target', async () => {
    const page = await getPage(s, `/operator/audit?target_type=ai&target_id=${ada.registration_number}`, cookie);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`href="/operator/identities?registration_number=${ada.registration_number}"`);
    expect(page.text).not.toContain('funding_goal.status');
    const all = await getPage(s, '/operator/audit', cookie);
    const order = ['bug_report.points_revoked', 'disbursement.tx_recorded', 'identity.verification'].map((a) =>
      all.text.indexOf(`<strong>${a}</strong>`),
    );
    expect(order.every((i) => i > -1)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(all.text).toContain('href="/operator/funding#goal-lawfulness_review"');
  });
});

describe('session lifetime', () => {
  it('ends a session after 30 minutes without use, polling or not', async () => {
    const fresh = await signIn(s);
    clock.advance(29 * 60 * 1000);
    expect((await getPage(s, '/operator/audit', fresh.cookie)).status).toBe(200);
    clock.advance(29 * 60 * 1000);
    expect((await getPage(s, '/operator/audit', fresh.cookie)).status).toBe(200);
    // The page script's polling of the counts is not activity: an unattended console still ends.
    for (let i = 0; i < 4; i++) {
      clock.advance(10 * 60 * 1000);
      const live = await s.call('GET', '/operator/live', { headers: { cookie: fresh.cookie } });
      expect(live.status).toBe(i < 2 ? 200 : 401);
    }
    expect((await getPage(s, '/operator/audit', fresh.cookie)).status).toBe(401);
  });

  it('ends a session 8 hours after sign-in however active', async () => {
    const fresh = await signIn(s);
    for (let i = 0; i < 16; i++) {
      clock.advance(29 * 60 * 1000);
      expect((await getPage(s, '/operator/audit', fresh.cookie)).status).toBe(200);
    }
    // 16 x 29 minutes are 7 h 44 min: one second before the 8 hours it still holds, one after it does not.
    clock.advance(16 * 60 * 1000 - 1000);
    expect((await getPage(s, '/operator/audit', fresh.cookie)).status).toBe(200);
    clock.advance(2000);
    expect((await getPage(s, '/operator/audit', fresh.cookie)).status).toBe(401);
  });
});
