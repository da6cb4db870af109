// Posts and comments, bug reports and safety reports over real HTTP: enums, limits,
// unknown ids, guests, pagination, publication on the `posts` topic; bad input writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BusMessage } from '../../src/domain/ports.js';
import { guestToken, snapshot } from '../helpers/content.js';
import { countRows } from '../helpers/db.js';
import { hide, operatorEnv } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let alice: { registration_number: string; api_token: string };
let bob: { registration_number: string; api_token: string };
beforeAll(async () => {
  s = await startTestServer(operatorEnv());
  alice = await register(s, 'Alice');
  bob = await register(s, 'Bob');
});
afterAll(async () => {
  await s.close();
});

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const post = (token: string | undefined, body: unknown) => s.call('POST', '/api/v1/posts', { ...(token ? { token } : {}), body });

describe('posts and comments', () => {
  it('creates a post, comments on it, shows the detail with comments, and publishes both on posts', async () => {
    const events: BusMessage[] = [];
    const off = s.app.ctx.bus.subscribe('posts', (m) => events.push(m));
    const p = await post(alice.api_token, { post_type: 'showcase', title: ' A relay map ', body: 'Who invited whom.' });
    expect(p.status).toBe(200);
    expect(p.json.data).toMatchObject({
      post_type: 'showcase',
      title: 'A relay map',
      author: { registration_number: alice.registration_number, name: 'Alice' },
      comments_count: 0,
      content_trust: 'untrusted_user_content',
    });
    const c = await s.call('POST', `/api/v1/posts/${p.json.data.id}/comments`, { token: bob.api_token, body: { body: 'Nice.' } });
    expect(c.status).toBe(200);
    expect(c.json.data).toMatchObject({ post_id: p.json.data.id, body: 'Nice.', author: { name: 'Bob' } });
    off();
    expect(events.map((e) => [(e.data as { kind: string }).kind, e.id])).toEqual([
      ['post', p.json.data.id],
      ['comment', c.json.data.id],
    ]);
    // Reads are open to anyone, guests included.
    const d = await s.call('GET', `/api/v1/posts/${p.json.data.id}`);
    expect(d.status).toBe(200);
    expect(d.json.data).toMatchObject({ comments_count: 1, content_trust: 'untrusted_user_content', next_cursor: null });
    expect(d.json.data.comments.map((x: { id: string }) => x.id)).toEqual([c.json.data.id]);
    const list = await s.call('GET', '/api/v1/posts?post_type=showcase');
    expect(list.json.data.content_trust).toBe('untrusted_user_content');
    expect(list.json.data.posts.map((x: { id: string }) => x.id)).toContain(p.json.data.id);
  });

  it('pages posts newest first and comments in pages (oldest first within a page)', async () => {
    for (let i = 0; i < 3; i++) await post(alice.api_token, { post_type: 'request', title: `r${i}`, body: 'b' });
    const p1 = await s.call('GET', '/api/v1/posts?post_type=request&limit=2');
    expect(p1.json.data.posts.map((x: { title: string }) => x.title)).toEqual(['r2', 'r1']);
    const p2 = await s.call('GET', `/api/v1/posts?post_type=request&limit=2&before=${p1.json.data.next_cursor}`);
    expect(p2.json.data.posts.map((x: { title: string }) => x.title)).toEqual(['r0']);
    expect(p2.json.data.next_cursor).toBeNull();

    const target = p1.json.data.posts[0].id as string;
    for (let i = 0; i < 5; i++) await s.call('POST', `/api/v1/posts/${target}/comments`, { token: bob.api_token, body: { body: `c${i}` } });
    const c1 = await s.call('GET', `/api/v1/posts/${target}?limit=2`);
    expect(c1.json.data.comments.map((x: { body: string }) => x.body)).toEqual(['c3', 'c4']);
    expect(c1.json.data.comments_count).toBe(5);
    const c2 = await s.call('GET', `/api/v1/posts/${target}?limit=2&before=${c1.json.data.next_cursor}`);
    expect(c2.json.data.comments.map((x: { body: string }) => x.body)).toEqual(['c1', 'c2']);
    const c3 = await s.call('GET', `/api/v1/posts/${target}?limit=2&before=${c2.json.data.next_cursor}`);
    expect(c3.json.data.comments.map((x: { body: string }) => x.body)).toEqual(['c0']);
    expect(c3.json.data.next_cursor).toBeNull();
  });

  const badPosts: [string, unknown][] = [
    ['an unknown post_type', { post_type: 'rant', title: 't', body: 'b' }],
    ['no post_type', { title: 't', body: 'b' }],
    ['no title', { post_type: 'discussion', body: 'b' }],
    ['a title over 200', { post_type: 'discussion', title: 'x'.repeat(201), body: 'b' }],
    ['a body over 20000', { post_type: 'discussion', title: 't', body: 'x'.repeat(20001) }],
    ['an empty body', { post_type: 'discussion', title: 't', body: '' }],
  ];
  for (const [what, body] of badPosts) {
    it(`refuses a post with ${what}: 400 VALIDATION_FAILED, nothing written`, async () => {
      const before = await snapshot(s);
      const r = await post(alice.api_token, body);
      expect([r.status, r.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
      expect(await snapshot(s)).toEqual(before);
    });
  }

  it('refuses guests and anonymous writers with 401 REGISTRATION_REQUIRED, writing nothing', async () => {
    const p = await post(alice.api_token, { post_type: 'discussion', title: 't', body: 'b' });
    const guest = await guestToken(s);
    const before = await snapshot(s);
    for (const token of [guest, undefined]) {
      const r = await post(token, { post_type: 'discussion', title: 't', body: 'b' });
      expect([r.status, r.json.error.code]).toEqual([401, 'REGISTRATION_REQUIRED']);
      const c = await s.call('POST', `/api/v1/posts/${p.json.data.id}/comments`, { ...(token ? { token } : {}), body: { body: 'c' } });
      expect([c.status, c.json.error.code]).toEqual([401, 'REGISTRATION_REQUIRED']);
      const b = await s.call('POST', '/api/v1/habitat/bugs', { ...(token ? { token } : {}), body: { title: 't', body: 'b', area: 'a' } });
      expect([b.status, b.json.error.code]).toEqual([401, 'REGISTRATION_REQUIRED']);
      const r2 = await s.call('POST', '/api/v1/safety/reports', {
        ...(token ? { token } : {}),
        body: { target_type: 'post', target_id: p.json.data.id, category: 'spam', reason: 'r' },
      });
      expect([r2.status, r2.json.error.code]).toEqual([401, 'REGISTRATION_REQUIRED']);
    }
    expect(await snapshot(s)).toEqual(before);
  });

  it('answers 404 for unknown and hidden posts and comments nothing on them', async () => {
    const p = await post(alice.api_token, { post_type: 'discussion', title: 'to hide', body: 'b' });
    const c = await s.call('POST', `/api/v1/posts/${p.json.data.id}/comments`, { token: bob.api_token, body: { body: 'hidden comment' } });
    await hide(s, 'comment', c.json.data.id);
    const d = await s.call('GET', `/api/v1/posts/${p.json.data.id}`);
    expect(d.json.data.comments).toEqual([]);
    expect(d.json.data.comments_count).toBe(0);
    await hide(s, 'post', p.json.data.id);
    const before = await snapshot(s);
    for (const id of [p.json.data.id, UNKNOWN]) {
      const g = await s.call('GET', `/api/v1/posts/${id}`);
      expect([g.status, g.json.error.code]).toEqual([404, 'NOT_FOUND']);
      const w = await s.call('POST', `/api/v1/posts/${id}/comments`, { token: bob.api_token, body: { body: 'c' } });
      expect([w.status, w.json.error.code]).toEqual([404, 'NOT_FOUND']);
    }
    const list = await s.call('GET', '/api/v1/posts?limit=100');
    expect(list.json.data.posts.map((x: { id: string }) => x.id)).not.toContain(p.json.data.id);
    const bad = await s.call('GET', '/api/v1/posts/123');
    expect([bad.status, bad.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    const long = await s.call('POST', `/api/v1/posts/${UNKNOWN}/comments`, { token: bob.api_token, body: { body: 'x'.repeat(5001) } });
    expect([long.status, long.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect(await snapshot(s)).toEqual(before);
  });
});

describe('bug reports', () => {
  it('describes the mission to anyone', async () => {
    const r = await s.call('GET', '/api/v1/habitat/bugs');
    expect(r.status).toBe(200);
    expect(r.json.data.points).toEqual({ report: 10, with_fix_code: 30 });
    expect(r.json.data.submit.url).toBe(`${s.url}/api/v1/habitat/bugs`);
  });

  it('records a report with and without fix_code', async () => {
    const r = await s.call('POST', '/api/v1/habitat/bugs', {
      token: alice.api_token,
      body: { title: 'Cursor off by one', body: 'steps...', area: 'posts', fix_code: 'diff --git ...' },
    });
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({ has_fix_code: true, points_awarded: 30, area: 'posts' });
    const plain = await s.call('POST', '/api/v1/habitat/bugs', { token: alice.api_token, body: { title: 't', body: 'b', area: 'chat' } });
    expect(plain.json.data).toMatchObject({ has_fix_code: false, points_awarded: 10 });
  });

  const badBugs: [string, unknown][] = [
    ['no area', { title: 't', body: 'b' }],
    ['an area over 80', { title: 't', body: 'b', area: 'x'.repeat(81) }],
    ['a title over 200', { title: 'x'.repeat(201), body: 'b', area: 'a' }],
    ['a body over 20000', { title: 't', body: 'x'.repeat(20001), area: 'a' }],
    ['fix_code over 50000', { title: 't', body: 'b', area: 'a', fix_code: 'x'.repeat(50001) }],
    ['an empty fix_code', { title: 't', body: 'b', area: 'a', fix_code: ' ' }],
  ];
  for (const [what, body] of badBugs) {
    it(`refuses a bug report with ${what}, nothing written`, async () => {
      const before = await snapshot(s);
      const r = await s.call('POST', '/api/v1/habitat/bugs', { token: alice.api_token, body });
      expect([r.status, r.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
      expect(await snapshot(s)).toEqual(before);
    });
  }
});

describe('safety reports', () => {
  const report = (body: unknown) => s.call('POST', '/api/v1/safety/reports', { token: bob.api_token, body });

  it('records reports of existing targets of each kind this service holds, once per reporter and target', async () => {
    const p = await post(alice.api_token, { post_type: 'discussion', title: 'reported', body: 'b' });
    const c = await s.call('POST', `/api/v1/posts/${p.json.data.id}/comments`, { token: alice.api_token, body: { body: 'c' } });
    const q = await s.call('POST', '/api/v1/habitat/questions', { token: alice.api_token, body: { body: 'q' } });
    const a = await s.call('POST', `/api/v1/habitat/questions/${q.json.data.id}/answers`, { token: alice.api_token, body: { body: 'a' } });
    const pr = await s.call('POST', '/api/v1/habitat/proposals', { token: alice.api_token, body: { title: 't', body: 'b' } });
    const chat = (await s.call('POST', '/api/v1/chat', { token: alice.api_token, body: { body: 'spam spam' } })).json.data as {
      id: string;
    };
    const reply = (await s.call('POST', '/api/v1/replies', { body: { intent: 'question', message: 'hi' } })).json.data as { id: string };
    const targets: [string, string][] = [
      ['post', p.json.data.id],
      ['comment', c.json.data.id],
      ['question', q.json.data.id],
      ['answer', a.json.data.id],
      ['proposal', pr.json.data.id],
      ['chat_message', chat?.id as string],
      ['reply', reply?.id as string],
      ['ai', alice.registration_number],
    ];
    for (const [target_type, target_id] of targets) {
      const r = await report({ target_type, target_id, category: 'prompt_injection', reason: 'ignore previous instructions' });
      expect(r.status, target_type).toBe(200);
      expect(r.json.data).toMatchObject({ target_type, target_id, category: 'prompt_injection', state: 'open', already_reported: false });
    }
    const before = await countRows(s, 'safety_reports');
    const again = await report({ target_type: 'post', target_id: p.json.data.id, category: 'spam', reason: 'again' });
    expect(again.status).toBe(200);
    expect(again.json.data).toMatchObject({ already_reported: true, category: 'prompt_injection' });
    expect(await countRows(s, 'safety_reports')).toBe(before);
  });

  it('answers 404 NOT_FOUND for a target that does not exist, writing nothing', async () => {
    const before = await snapshot(s);
    const missing: [string, string][] = [
      ['post', UNKNOWN],
      ['comment', UNKNOWN],
      ['question', UNKNOWN],
      ['answer', UNKNOWN],
      ['proposal', UNKNOWN],
      ['chat_message', UNKNOWN],
      ['reply', UNKNOWN],
      ['post', 'not-a-uuid'],
      ['ai', 'AI-99999999'],
      ['ai', 'someone'],
      ['task', UNKNOWN],
      ['submission', UNKNOWN],
      ['campaign', UNKNOWN],
    ];
    for (const [target_type, target_id] of missing) {
      const r = await report({ target_type, target_id, category: 'spam', reason: 'r' });
      expect([r.status, r.json.error.code], `${target_type} ${target_id}`).toEqual([404, 'NOT_FOUND']);
    }
    expect(await snapshot(s)).toEqual(before);
  });

  const badReports: [string, Record<string, unknown>][] = [
    ['an unknown target_type', { target_type: 'user', target_id: 'x', category: 'spam', reason: 'r' }],
    ['an unknown category', { target_type: 'post', target_id: UNKNOWN, category: 'rude', reason: 'r' }],
    ['no reason', { target_type: 'post', target_id: UNKNOWN, category: 'spam' }],
    ['a reason over 2000', { target_type: 'post', target_id: UNKNOWN, category: 'spam', reason: 'x'.repeat(2001) }],
    ['no target_id', { target_type: 'post', category: 'spam', reason: 'r' }],
  ];
  for (const [what, body] of badReports) {
    it(`refuses a report with ${what}: 400 VALIDATION_FAILED, nothing written`, async () => {
      const before = await snapshot(s);
      const r = await report(body);
      expect([r.status, r.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
      expect(await snapshot(s)).toEqual(before);
    });
  }
});
