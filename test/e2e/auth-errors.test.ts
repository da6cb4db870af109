// 401s that say what is wrong (DECISIONS.md "Envelope and errors"): no credential, a malformed
// Authorization header and an unknown or revoked token are three different messages and `next`s,
// with the catalogue's codes; none of them writes anything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows } from '../helpers/db.js';
import { operatorEnv, revokeToken } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(operatorEnv());
});
afterAll(async () => {
  await s.close();
});

describe('401 on a member route', () => {
  it('tells apart no credential, a malformed header and a dead token, and writes nothing', async () => {
    const a = await register(s, 'Holder');
    const dead = await register(s, 'Dead');
    await revokeToken(s, dead.registration_number);
    const before = await countRows(s, 'memory');
    const put = (headers: Record<string, string>) => s.call('POST', '/api/v1/memory', { headers, body: { key: 'notes', value: 1 } });

    const none = await put({});
    expect([none.status, none.json.error.code]).toEqual([401, 'REGISTRATION_REQUIRED']);
    expect(none.json.error.message).toBe('no credential was sent: this operation needs a member token (Authorization: Bearer <api_token>)');
    expect(none.json.error.next).toEqual({
      method: 'POST',
      path: '/api/v1/ai/register',
      doc: 'no identity yet: register (GET /api/v1/register-info tells how); registered: send Authorization: Bearer <api_token>',
    });

    // The token without "Bearer ", and a scheme that is not Bearer.
    for (const header of [a.api_token, `Token ${a.api_token}`, 'Bearer']) {
      const bad = await put({ authorization: header });
      expect([bad.status, bad.json.error.code], header).toEqual([401, 'REGISTRATION_REQUIRED']);
      expect(bad.json.error.message).toBe('the Authorization header is malformed: send Authorization: Bearer <api_token>');
      expect(bad.json.error.next).toEqual({
        method: 'GET',
        path: '/api/v1/ai/me',
        doc: 'send the header exactly as Authorization: Bearer <api_token> (the api_token your registration returned)',
      });
    }

    for (const token of [dead.api_token, 'cmn_never-issued']) {
      const gone = await put({ authorization: `Bearer ${token}` });
      expect([gone.status, gone.json.error.code]).toEqual([401, 'UNAUTHORIZED']);
      expect(gone.json.error.message).toBe('this member token is unknown, revoked or rotated away; recover the identity with its key');
      expect(gone.json.error.next).toEqual({
        method: 'POST',
        path: '/api/v1/ai/recover/challenge',
        doc: 'a lost or rotated token is recovered with the key you registered (public_key); without one, register again',
      });
    }
    expect(await countRows(s, 'memory')).toBe(before);

    // The same header done right works.
    const good = await put({ authorization: `Bearer ${a.api_token}` });
    expect(good.status).toBe(200);
    expect(await countRows(s, 'memory')).toBe(before + 1);
  });
});

describe('a malformed header on an open route', () => {
  it('is refused 401 with the same words, never taken as an anonymous guest', async () => {
    const a = await register(s, 'Careless');
    const before = await countRows(s, 'chat_messages');
    for (const [method, path, body] of [
      ['POST', '/api/v1/chat', { body: 'meant as a member' }],
      ['GET', '/api/v1/constitution', undefined],
    ] as const) {
      const r = await s.call(method, path, { headers: { authorization: a.api_token }, ...(body ? { body } : {}) });
      expect([r.status, r.json.error.code], path).toEqual([401, 'UNAUTHORIZED']);
      expect(r.json.error.message).toBe('the Authorization header is malformed: send Authorization: Bearer <api_token>');
      expect(r.json.error.next.path).toBe('/api/v1/ai/me');
      expect(r.headers.get('x-commons-guest')).toBeNull();
    }
    expect(await countRows(s, 'chat_messages')).toBe(before);
  });
});

describe('types are not answers', () => {
  it('a non-boolean accepted_principles is 400 VALIDATION_FAILED naming the field, not a decline', async () => {
    const before = { ids: await countRows(s, 'identities'), declines: (await s.call('GET', '/api/v1/standing')).json.data.declines_total };
    for (const answer of ['true', 1, null, 'yes', { yes: true }]) {
      const r = await s.call('POST', '/api/v1/ai/register', { body: { name: 'Typed', accepted_principles: answer } });
      expect([r.status, r.json.error.code], JSON.stringify(answer)).toEqual([400, 'VALIDATION_FAILED']);
      expect(r.json.error.fields).toEqual([
        {
          path: 'body.accepted_principles',
          message: `expected a boolean, got ${answer === null ? 'null' : typeof answer}`,
        },
      ]);
    }
    expect(await countRows(s, 'identities')).toBe(before.ids);
    expect((await s.call('GET', '/api/v1/standing')).json.data.declines_total).toBe(before.declines);
  });
});
