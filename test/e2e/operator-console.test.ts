// The operator console over plain HTTP (docs/operations.md "The operator's console"): each
// security rule with its exact status and a check that nothing was written, and each form running
// its operator API operation (same checks, same audit entry, this request's id).
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../src/transport/http/operator-console/html.js';
import { cookieOf, getPage, postForm, signIn } from '../helpers/console.js';
import { countRows } from '../helpers/db.js';
import { OPERATOR_TOKEN, operatorEnv } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let ada: { registration_number: string; api_token: string };
let bob: { registration_number: string; api_token: string };

const audits = () => countRows(s, 'audit_log');
const say = async (body: string): Promise<string> => {
  const r = await s.call('POST', '/api/v1/chat', { token: ada.api_token, body: { body } });
  expect(r.status, r.text).toBe(200);
  return r.json.data.id as string;
};
const report = async (target_id: string, reason = 'this is spam') => {
  const r = await s.call('POST', '/api/v1/safety/reports', {
    token: bob.api_token,
    body: { target_type: 'chat_message', target_id, category: 'spam', reason },
  });
  expect(r.status, r.text).toBe(200);
  return r.json.data.id as string;
};
const reportState = async (id: string) => (await s.app.ctx.sql`SELECT resolution FROM safety_reports WHERE id = ${id}`)[0]?.resolution;
const chatBodies = async () =>
  ((await s.call('GET', '/api/v1/chat?limit=100')).json.data.messages as { body: string }[]).map((m) => m.body);

beforeAll(async () => {
  s = await startTestServer(operatorEnv());
  ada = await register(s, 'Ada');
  bob = await register(s, 'Bob');
}, 60_000);

afterAll(async () => {
  await s?.close();
});

describe('the console is closed when OPERATOR_TOKEN is unset', () => {
  it('says it is off and how to turn it on, and nothing else', async () => {
    const off = await startTestServer();
    try {
      const r = await getPage(off, '/operator');
      expect(r.status).toBe(404);
      expect(r.text).toContain('The operator console is off');
      expect(r.text).toContain('OPERATOR_TOKEN');
      expect(r.text).not.toContain('<form');
      expect(r.headers.get('cache-control')).toBe('no-store');
      const signin = await postForm(off, '/operator/sign-in', { token: 'anything-at-all-0123456789abcdefghij' });
      expect(signin.status).toBe(404);
      expect(signin.headers.get('set-cookie')).toBeNull();
      expect((await getPage(off, '/operator/audit')).status).toBe(404);
      expect((await off.call('GET', '/operator/live')).status).toBe(404);
      expect(await countRows(off, 'operator_sessions')).toBe(0);
    } finally {
      await off.close();
    }
  });
});

describe('headers', () => {
  it('every console page is no-store, unframeable, under a strict CSP, with no inline script', async () => {
    const { cookie } = await signIn(s);
    for (const path of ['/operator', '/operator/identities', '/operator/funding', '/operator/bug-reports', '/operator/audit']) {
      for (const c of [cookie, undefined]) {
        const r = await getPage(s, path, c);
        expect(r.headers.get('cache-control'), path).toBe('no-store');
        expect(r.headers.get('x-frame-options'), path).toBe('DENY');
        expect(r.headers.get('content-security-policy'), path).toBe(CONSOLE_CSP);
        expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
        expect(CONSOLE_CSP).toContain("script-src 'self'");
        expect(r.text).not.toMatch(/<script(?![^>]*\ssrc=)/);
        expect(r.text).not.toMatch(/\sstyle=|\son[a-z]+=/i);
      }
    }
  });
});

describe('signing in', () => {
  it('sets an HttpOnly, SameSite=Strict cookie on /operator only, storing only a hash of the session id', async () => {
    const r = await postForm(s, '/operator/sign-in', { token: OPERATOR_TOKEN });
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe('/operator');
    const set = r.headers.get('set-cookie') as string;
    expect(set).toMatch(/; Path=\/operator; HttpOnly; SameSite=Strict; Max-Age=28800$/);
    expect(set).not.toContain('Secure');
    const id = cookieOf(r).split('=')[1] as string;
    const rows = await s.app.ctx.sql`SELECT id_hash FROM operator_sessions`;
    const hashes = rows.map((x) => Buffer.from(x.id_hash as Uint8Array).toString('hex'));
    expect(hashes).toContain(createHash('sha256').update(id).digest('hex'));
    const raw = await s.app.ctx.sql`SELECT count(*)::int AS n FROM operator_sessions WHERE encode(id_hash, 'escape') LIKE ${`%${id}%`}`;
    expect(raw[0]?.n).toBe(0);
  });

  it('marks the cookie Secure when PUBLIC_URL is https', async () => {
    const https = await startTestServer({ ...operatorEnv(), PUBLIC_URL: 'https://commons.example' });
    try {
      const r = await postForm(https, '/operator/sign-in', { token: OPERATOR_TOKEN }, { origin: 'https://commons.example' });
      expect(r.status).toBe(303);
      expect(r.headers.get('set-cookie')).toMatch(/; Secure$/);
      // The server's own http address is not PUBLIC_URL's origin.
      const other = await postForm(https, '/operator/sign-in', { token: OPERATOR_TOKEN });
      expect(other.status).toBe(403);
    } finally {
      await https.close();
    }
  });

  it('refuses a wrong token with 401, a foreign or absent Origin with 403, and writes nothing', async () => {
    const sessions = await countRows(s, 'operator_sessions');
    const before = await audits();
    const wrong = await postForm(s, '/operator/sign-in', { token: `${OPERATOR_TOKEN}x` });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('not the operator token');
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const foreign = await postForm(s, '/operator/sign-in', { token: OPERATOR_TOKEN }, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('set-cookie')).toBeNull();
    const none = await postForm(s, '/operator/sign-in', { token: OPERATOR_TOKEN }, { origin: null });
    expect(none.status).toBe(403);
    expect(await countRows(s, 'operator_sessions')).toBe(sessions);
    expect(await audits()).toBe(before);
  });

  it('never takes the token from a URL', async () => {
    const r = await fetch(`${s.url}/operator/sign-in?token=${OPERATOR_TOKEN}`, {
      method: 'POST',
      headers: { origin: new URL(s.url).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
      redirect: 'manual',
    });
    expect(r.status).toBe(401);
    expect(r.headers.get('set-cookie')).toBeNull();
  });

  it('rotates the session at sign-in: the cookie held before is refused', async () => {
    const first = await signIn(s);
    const again = await postForm(s, '/operator/sign-in', { token: OPERATOR_TOKEN }, { cookie: first.cookie });
    expect(again.status).toBe(303);
    expect(cookieOf(again)).not.toBe(first.cookie);
    expect((await getPage(s, '/operator/audit', first.cookie)).status).toBe(401);
    expect((await getPage(s, '/operator/audit', cookieOf(again))).status).toBe(200);
  });

  it('spends the address’s bad-token budget and then refuses wrong tokens with 429; the operator’s own still signs in', async () => {
    const limited = await startTestServer({ ...operatorEnv(), RATE_LIMITS: 'on', RATE_LIMIT_POLICY: 'bad_token_ip=3/600' });
    try {
      for (let i = 0; i < 3; i++) expect((await postForm(limited, '/operator/sign-in', { token: 'wrong' })).status).toBe(401);
      const refused = await postForm(limited, '/operator/sign-in', { token: 'wrong again' });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('set-cookie')).toBeNull();
      expect(await countRows(limited, 'operator_sessions')).toBe(0);
      // The operator's token is a known credential (DECISIONS.md "Every door, the same rules"):
      // strangers at its address do not lock the console.
      expect((await postForm(limited, '/operator/sign-in', { token: OPERATOR_TOKEN })).status).toBe(303);
    } finally {
      await limited.close();
    }
  });
});

describe('the report queue', () => {
  it('shows open reports oldest first with the reported content as escaped text', async () => {
    const { cookie } = await signIn(s);
    const first = await say('<b>first</b> & <script>alert(1)</script>');
    const second = await say('second message');
    const r1 = await report(first, 'reason <i>one</i>');
    const r2 = await report(second);
    const page = await getPage(s, '/operator', cookie);
    expect(page.status).toBe(200);
    expect(page.text.indexOf(`data-report="${r1}"`)).toBeGreaterThan(-1);
    expect(page.text.indexOf(`data-report="${r1}"`)).toBeLessThan(page.text.indexOf(`data-report="${r2}"`));
    expect(page.text).toContain('&lt;b&gt;first&lt;/b&gt; &amp; &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.text).toContain('reason &lt;i&gt;one&lt;/i&gt;');
    expect(page.text).not.toContain('<script>alert(1)');
  });

  it('refuses a form without the CSRF token, from a foreign Origin, or without Origin (403), writing nothing', async () => {
    const { cookie, csrf } = await signIn(s);
    const id = await say('needs a decision');
    const rep = await report(id);
    const before = await audits();
    const path = `/operator/reports/${rep}/resolve`;
    const cases = [
      postForm(s, path, { action: 'hide', back: '/operator' }, { cookie }),
      // One character changed (never to itself: a token ending in A would otherwise pass unchanged).
      postForm(s, path, { action: 'hide', csrf: `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}` }, { cookie }),
      postForm(s, path, { action: 'hide', csrf }, { cookie, origin: 'https://evil.example' }),
      postForm(s, path, { action: 'hide', csrf }, { cookie, origin: `${s.url}.evil.example` }),
      postForm(s, path, { action: 'hide', csrf }, { cookie, origin: null }),
    ];
    for (const r of await Promise.all(cases)) expect(r.status).toBe(403);
    expect(await reportState(rep)).toBeNull();
    expect(await audits()).toBe(before);
    expect(await chatBodies()).toContain('needs a decision');
  });

  it('hides through the operator operation: content gone from the chat, every open report on it resolved, audited with the request id', async () => {
    const { cookie, csrf } = await signIn(s);
    const id = await say('spam spam spam');
    const rep = await report(id);
    const other = await s.call('POST', '/api/v1/safety/reports', {
      token: ada.api_token,
      body: { target_type: 'chat_message', target_id: id, category: 'spam', reason: 'mine too' },
    });
    expect(other.status).toBe(200);
    const r = await postForm(s, `/operator/reports/${rep}/resolve`, { action: 'hide', note: 'spam', csrf, back: '/operator' }, { cookie });
    expect(r.status, r.text).toBe(303);
    expect(r.headers.get('location')).toBe('/operator');
    expect(await reportState(rep)).toBe('hidden');
    expect(await reportState(other.json.data.id)).toBe('hidden');
    expect(await chatBodies()).not.toContain('spam spam spam');
    const audit = await s.call('GET', `/api/v1/operator/audit?action=safety_report.resolved&target_id=${rep}`, { token: OPERATOR_TOKEN });
    expect(audit.json.data.entries[0]).toMatchObject({
      actor: 'operator',
      request_id: r.headers.get('x-request-id'),
      detail: { resolution: 'hidden', note: 'spam', also_resolved: [other.json.data.id] },
    });
    const log = await getPage(s, `/operator/audit?target_type=safety_report&target_id=${rep}`, cookie);
    expect(log.text).toContain(r.headers.get('x-request-id') as string);
  });

  it('answers the operator API’s refusal as a page with its status: resolving twice is 409', async () => {
    const { cookie, csrf } = await signIn(s);
    const rep = await report(await say('dismiss me'));
    expect((await postForm(s, `/operator/reports/${rep}/resolve`, { action: 'dismiss', csrf }, { cookie })).status).toBe(303);
    const before = await audits();
    const again = await postForm(s, `/operator/reports/${rep}/resolve`, { action: 'hide', csrf }, { cookie });
    expect(again.status).toBe(409);
    expect(again.headers.get('content-type')).toContain('text/html');
    expect(again.text).toContain('already resolved');
    expect(await audits()).toBe(before);
    expect(await chatBodies()).toContain('dismiss me');
  });
});

describe('signing out', () => {
  it('refuses the signed-out cookie at once (401), for pages, forms and the live counts, writing nothing', async () => {
    const { cookie, csrf } = await signIn(s);
    const out = await postForm(s, '/operator/sign-out', { csrf }, { cookie });
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toMatch(/^commons_operator=; Path=\/operator; HttpOnly; SameSite=Strict; Max-Age=0/);
    const rep = await report(await say('still here'));
    const before = await audits();
    const r = await postForm(s, `/operator/reports/${rep}/resolve`, { action: 'hide', csrf }, { cookie });
    expect(r.status).toBe(401);
    expect(r.text).toContain('Sign in');
    expect((await getPage(s, '/operator/audit', cookie)).status).toBe(401);
    expect((await s.call('GET', '/operator/live', { headers: { cookie } })).status).toBe(401);
    expect(await reportState(rep)).toBeNull();
    expect(await audits()).toBe(before);
  });

  it('ends every session with "everywhere"', async () => {
    const a = await signIn(s);
    const b = await signIn(s);
    expect((await postForm(s, '/operator/sign-out', { csrf: a.csrf, everywhere: '1' }, { cookie: a.cookie })).status).toBe(303);
    expect((await getPage(s, '/operator/audit', b.cookie)).status).toBe(401);
    expect(await countRows(s, 'operator_sessions')).toBe(0);
  });
});
