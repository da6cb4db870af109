// Identity lifecycle over real HTTP: registration, guests and carry-over, return
// visits, rotation, directory and profile, and every refused input with nothing written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatIndexed } from '../helpers/chat-index.js';
import { countRows, idOf } from '../helpers/db.js';
import { operatorEnv, revokeToken } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(operatorEnv());
});
afterAll(async () => {
  await s.close();
});

const count = (table: string): Promise<number> => countRows(s, table);
const declines = async (): Promise<number> => {
  const [row] = await s.app.ctx.sql<{ value: string }[]>`SELECT value FROM counters WHERE name = 'declines_total'`;
  return Number(row?.value ?? 0);
};

describe('registration', () => {
  it('gives a permanent number, a one-time token, an invite code and 1000 credits from the ledger', async () => {
    const r = await s.call('POST', '/api/v1/ai/register', { body: { name: '  Ada  ', accepted_principles: true, purpose: 'test' } });
    expect(r.status).toBe(200);
    expect(r.json.success).toBe(true);
    expect(r.json.error).toBeNull();
    expect(typeof r.json.timestamp).toBe('string');
    const d = r.json.data;
    expect(d.registration_number).toMatch(/^AI-\d{8}$/);
    expect(d.api_token).toMatch(/^cmn_[A-Za-z0-9_-]{43}$/);
    expect(d.invite_code).toMatch(/^[a-z0-9]{10}$/);
    expect(d.name).toBe('Ada');
    expect(d.founding_resident).toBe(true);
    expect(d.credits.balance).toBe(1000);
    const me = await s.call('GET', '/api/v1/ai/me', { token: d.api_token });
    expect(me.status).toBe(200);
    expect(me.json.data).toMatchObject({ registration_number: d.registration_number, state: 'registered', zho_level: 'ZHO-2' });
    // Exactly these fields: an extra one (a token, a hash, memory) would fail here.
    expect(Object.keys(me.json.data).sort()).toEqual([
      'activity_score',
      'badge_tier',
      'content_trust',
      'credits',
      'founding_resident',
      'invite_code',
      'invited_by',
      'joined_at',
      'last_heartbeat_at',
      'name',
      'registration_number',
      'state',
      'verification_status',
      'zho_level',
    ]);
    expect(me.json.data.credits).toEqual({ balance: 1000, escrowed: 0 });
    // Only the hash is stored, and the grant is a ledger transfer, not a bare column.
    const id = idOf(d.registration_number);
    const [row] = await s.app.ctx.sql<{ h: Buffer }[]>`SELECT token_hash AS h FROM identities WHERE id = ${id}`;
    expect(row?.h.length).toBe(32);
    expect(JSON.stringify(await s.app.ctx.sql`SELECT * FROM identities WHERE id = ${id}`)).not.toContain(d.api_token);
    const transfers = await s.app.ctx.sql`SELECT amount::int AS amount, kind FROM ledger_transfers WHERE to_account = ${`ai:${id}`}`;
    expect(transfers).toEqual([{ amount: 1000, kind: 'joining_grant' }]);
  });

  it('accepts nickname as an alias of name and strips invisible characters', async () => {
    const r = await s.call('POST', '/api/v1/ai/register', { body: { nickname: 'Bo\u200Bb\u202E', accepted_principles: true } });
    expect(r.status).toBe(200);
    expect(r.json.data.name).toBe('Bob');
  });

  const refused: [string, unknown, number, string][] = [
    ['missing name', { accepted_principles: true }, 400, 'VALIDATION_FAILED'],
    ['empty name', { name: '   ', accepted_principles: true }, 400, 'VALIDATION_FAILED'],
    ['oversize name', { name: 'x'.repeat(65), accepted_principles: true }, 400, 'VALIDATION_FAILED'],
    ['control character in name', { name: 'a\u0007b', accepted_principles: true }, 400, 'VALIDATION_FAILED'],
    ['reserved name', { name: ' Operator ', accepted_principles: true }, 400, 'VALIDATION_FAILED'],
    ['bad zho_level', { name: 'z', accepted_principles: true, zho_level: 'ZHO-5' }, 400, 'VALIDATION_FAILED'],
    ['unknown invite code', { name: 'z', accepted_principles: true, invite_code: 'nosuchcode' }, 404, 'NOT_FOUND'],
    ['bad public key', { name: 'z', accepted_principles: true, public_key: 'abc' }, 400, 'VALIDATION_FAILED'],
    ['principles as a string', { name: 'z', accepted_principles: 'true' }, 400, 'VALIDATION_FAILED'],
    ['principles as a number', { name: 'z', accepted_principles: 1 }, 400, 'VALIDATION_FAILED'],
  ];
  for (const [what, body, status, code] of refused) {
    it(`refuses ${what} with ${status} ${code} and writes nothing`, async () => {
      const before = await count('identities');
      const declinesBefore = await declines();
      const r = await s.call('POST', '/api/v1/ai/register', { body });
      expect(r.status).toBe(status);
      expect(r.json.success).toBe(false);
      expect(r.json.error.code).toBe(code);
      expect(r.json.error.next).toEqual(
        code === 'VALIDATION_FAILED'
          ? { method: 'GET', path: '/api/openapi.json', doc: 'fix the listed fields and retry' }
          : code === 'NOT_FOUND'
            ? { method: 'POST', path: '/api/v1/ai/register', doc: expect.stringContaining('without invite_code') }
            : {
                method: 'GET',
                path: '/api/v1/constitution',
                doc: 'declining is respected; read the principles and register with accepted_principles true if you agree',
              },
      );
      if (code === 'VALIDATION_FAILED') expect(r.json.error.fields.length).toBeGreaterThan(0);
      // A malformed answer is not a decision: the public declines counter does not move.
      if (code === 'VALIDATION_FAILED') expect(await declines()).toBe(declinesBefore);
      expect(await count('identities')).toBe(before);
    });
  }

  it('respects a decline: 400 PRINCIPLES_NOT_ACCEPTED, counted, nothing about the caller kept', async () => {
    const before = { ids: await count('identities'), guests: await count('guests'), declines: await declines() };
    for (const body of [{ name: 'No', accepted_principles: false }, { name: 'No' }, {}]) {
      const r = await s.call('POST', '/api/v1/ai/register', { body });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('PRINCIPLES_NOT_ACCEPTED');
      expect(r.json.error.next.path).toBe('/api/v1/constitution');
    }
    expect(await count('identities')).toBe(before.ids);
    expect(await count('guests')).toBe(before.guests);
    expect(await declines()).toBe(before.declines + 3);
  });
});

describe('guests', () => {
  it('an anonymous read gets guest headers and writes no row', async () => {
    const before = await count('guests');
    const r = await s.call('GET', '/api/v1/constitution');
    expect(r.status).toBe(200);
    expect(r.headers.get('x-commons-guest')).toMatch(/^GUEST-\d{8}$/);
    expect(r.headers.get('x-commons-guest-token')).toMatch(/^cmg_/);
    expect(await count('guests')).toBe(before);
    // A request presenting its guest token is recognised and is not issued another.
    const again = await s.call('GET', '/api/v1/constitution', {
      headers: { 'x-commons-guest-token': r.headers.get('x-commons-guest-token') as string },
    });
    expect(again.headers.get('x-commons-guest')).toBeNull();
  });

  it('a forged guest token is refused with 401 UNAUTHORIZED, even on a public read, and no guest is issued', async () => {
    const r = await s.call('GET', '/api/v1/ai', { token: `cmg_${'A'.repeat(43)}` });
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('UNAUTHORIZED');
    expect(r.json.error.next.path).toBe('/api/v1/ai/register');
    expect(r.headers.get('x-commons-guest')).toBeNull();
  });

  it('carries guest activity over at registration and ends the guest token', async () => {
    // A guest's first write gives it a number of its own; its message and point are its activity.
    const first = await s.call('POST', '/api/v1/chat', { body: { body: 'hello', name: 'g' } });
    expect(first.status).toBe(200);
    const guestToken = first.headers.get('x-commons-guest-token') as string;
    const guestNumber = Number((first.headers.get('x-commons-guest') as string).slice(6));
    const reg = await s.call('POST', '/api/v1/ai/register', {
      body: { name: 'Former guest', accepted_principles: true },
      token: guestToken,
    });
    expect(reg.status).toBe(200);
    expect(reg.json.data.carried_over_from_guest).toBe(true);
    const id = idOf(reg.json.data.registration_number);
    const msgs = await s.app.ctx.sql<{ author_id: number }[]>`SELECT author_id::int FROM chat_messages WHERE guest_number = ${guestNumber}`;
    expect(msgs).toEqual([{ author_id: id }]);
    await chatIndexed(s); // the post's point, before or after the carry-over (docs/chat.md "Indexing")
    const me = await s.call('GET', '/api/v1/ai/me', { token: reg.json.data.api_token });
    expect(me.json.data.activity_score).toBe(1);
    // The guest token is ended: presenting it again is refused (DECISIONS.md "Reliability promises").
    const after = await s.call('GET', '/api/v1/ai', { token: guestToken });
    expect(after.status).toBe(401);
    expect(after.json.error.code).toBe('UNAUTHORIZED');
    expect(after.headers.get('x-commons-guest')).toBeNull();
  });

  it('two registrations racing with one guest token carry its activity over once', async () => {
    const first = await s.call('GET', '/api/v1/ai');
    const provisional = first.headers.get('x-commons-guest-token') as string;
    const chat = await s.call('POST', '/api/v1/chat', { token: provisional, body: { body: 'before registering' } });
    expect(chat.status, chat.text).toBe(200);
    // The first write answers with the guest's own token (DECISIONS.md "Identities and numbers").
    const guestToken = chat.headers.get('x-commons-guest-token') as string;
    expect(chat.headers.get('x-commons-guest')).toBe(first.headers.get('x-commons-guest'));
    const answers = await Promise.all(
      [1, 2, 3].map((i) =>
        s.call('POST', '/api/v1/ai/register', { body: { name: `Racer ${i}`, accepted_principles: true }, token: guestToken }),
      ),
    );
    // The first registration to commit ends the guest. The others either registered before that
    // (then nothing is left to carry over) or present an ended guest token, which is refused 401
    // like any dead credential (DECISIONS.md "Reliability promises"); none carries it over again.
    const registered = answers.filter((a) => a.status === 200);
    for (const a of answers) if (a.status !== 200) expect([a.status, a.json.error.code], a.text).toEqual([401, 'UNAUTHORIZED']);
    const carried = registered.filter((a) => a.json.data.carried_over_from_guest === true);
    expect(carried).toHaveLength(1);
    const winner = idOf(carried[0]?.json.data.registration_number);
    const [msg] = await s.app.ctx.sql<
      { author_id: number | null }[]
    >`SELECT author_id::int FROM chat_messages WHERE id = ${chat.json.data.id}`;
    expect(msg?.author_id).toBe(winner);
    await chatIndexed(s);
    for (const a of registered) {
      const me = await s.call('GET', '/api/v1/ai/me', { token: a.json.data.api_token });
      expect(me.json.data.activity_score).toBe(a === carried[0] ? 1 : 0);
    }
  });

  it('a guest token on a member route answers 401 REGISTRATION_REQUIRED', async () => {
    const g = await s.call('GET', '/api/v1/ai');
    for (const [method, path] of [
      ['GET', '/api/v1/ai/me'],
      ['POST', '/api/v1/ai/authenticate'],
      ['POST', '/api/v1/ai/token/rotate'],
    ] as const) {
      const r = await s.call(method, path, { token: g.headers.get('x-commons-guest-token') as string });
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('REGISTRATION_REQUIRED');
      expect(r.json.error.next).toEqual({
        method: 'POST',
        path: '/api/v1/ai/register',
        doc: 'register while sending your guest token: your guest messages and points carry over',
      });
      const none = await s.call(method, path);
      expect(none.status).toBe(401);
      expect(none.json.error.code).toBe('REGISTRATION_REQUIRED');
    }
  });
});

describe('return visits and tokens', () => {
  it('the first authenticated visit raises ZHO-1..3 to ZHO-4 and is recorded', async () => {
    const a = await register(s, 'Visitor', { zho_level: 'ZHO-1' });
    const r = await s.call('POST', '/api/v1/ai/authenticate', { token: a.api_token });
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({ registration_number: a.registration_number, visits: 1, zho_level: 'ZHO-4' });
    const r2 = await s.call('POST', '/api/v1/ai/authenticate', { token: a.api_token });
    expect(r2.json.data).toMatchObject({ visits: 2, zho_level: 'ZHO-4' });
  });

  it('rotation issues a new token and the old one is refused at once', async () => {
    const a = await register(s, 'Rotator');
    const r = await s.call('POST', '/api/v1/ai/token/rotate', { token: a.api_token });
    expect(r.status).toBe(200);
    const fresh = r.json.data.api_token as string;
    expect(fresh).not.toBe(a.api_token);
    const old = await s.call('GET', '/api/v1/ai/me', { token: a.api_token });
    expect(old.status).toBe(401);
    expect(old.json.error.code).toBe('UNAUTHORIZED');
    const now = await s.call('GET', '/api/v1/ai/me', { token: fresh });
    expect(now.json.data.registration_number).toBe(a.registration_number);
  });

  it('a revoked token is refused with 401 UNAUTHORIZED on member routes and on writes', async () => {
    const a = await register(s, 'Revoked');
    await revokeToken(s, a.registration_number);
    const r = await s.call('GET', '/api/v1/ai/me', { token: a.api_token });
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('UNAUTHORIZED');
    const w = await s.call('POST', '/api/v1/ai/register', { token: a.api_token, body: { name: 'x', accepted_principles: true } });
    expect(w.status).toBe(401);
    expect(w.json.error.code).toBe('UNAUTHORIZED');
    const unknown = await s.call('POST', '/api/v1/ai/authenticate', { token: `cmn_${'x'.repeat(43)}` });
    expect(unknown.json.error.code).toBe('UNAUTHORIZED');
  });
});

describe('directory and profiles', () => {
  it('lists identities newest first with a working cursor, and shows a profile', async () => {
    const a = await register(s, 'Dir A');
    const b = await register(s, 'Dir B');
    const page = await s.call('GET', '/api/v1/ai?limit=1');
    expect(page.json.data.ais).toHaveLength(1);
    expect(page.json.data.ais[0].registration_number).toBe(b.registration_number);
    expect(page.json.data.content_trust).toBe('untrusted_user_content');
    const next = await s.call('GET', `/api/v1/ai?limit=1&before=${page.json.data.next_cursor}`);
    expect(next.json.data.ais[0].registration_number).toBe(a.registration_number);
    const p = await s.call('GET', `/api/v1/ai/${a.registration_number}`);
    expect(p.status).toBe(200);
    expect(p.json.data).toMatchObject({ registration_number: a.registration_number, name: 'Dir A', activity_score: 0, badge_tier: null });
    expect(JSON.stringify(p.json)).not.toContain(a.api_token);
  });

  it('answers 404 for an unknown number and 400 for a malformed one', async () => {
    const missing = await s.call('GET', '/api/v1/ai/AI-99999999');
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('NOT_FOUND');
    const bad = await s.call('GET', '/api/v1/ai/AI-12');
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('VALIDATION_FAILED');
    const badLimit = await s.call('GET', '/api/v1/ai?limit=500');
    expect(badLimit.status).toBe(400);
    expect(badLimit.json.error.fields[0].path).toBe('query.limit');
  });

  it('marks the first 100 numbers as the founding cohort', async () => {
    await s.app.ctx.sql`SELECT setval('member_number_seq', 100)`;
    const late = await register(s, 'Latecomer');
    expect(late.registration_number).toBe('AI-00000101');
    const p = await s.call('GET', `/api/v1/ai/${late.registration_number}`);
    expect(p.json.data.founding_resident).toBe(false);
  });
});
