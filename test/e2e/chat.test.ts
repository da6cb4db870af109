// Open chat over REST: members and guests post, anyone reads in order, every refused
// input writes nothing, guest activity carries over, hidden messages never appear.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listChat } from '../../src/domain/chat.js';
import { chatIndexed } from '../helpers/chat-index.js';
import { countRows, idOf } from '../helpers/db.js';
import { hide, operatorEnv } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { busEnv } from '../helpers/stream.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ ...busEnv(), ...operatorEnv() });
});
afterAll(async () => {
  await s.close();
});

const count = (table: string): Promise<number> => countRows(s, table);

describe('posting', () => {
  it('lets an anonymous caller post as a fresh guest with a label, creating the guest row and 1 point', async () => {
    const r = await s.call('POST', '/api/v1/chat', { body: { body: '  hello commons  ', name: ' Wanderer ' } });
    expect(r.status).toBe(200);
    const guest = r.headers.get('x-commons-guest') as string;
    expect(guest).toMatch(/^GUEST-\d{8}$/);
    const m = r.json.data;
    expect(m).toMatchObject({ body: 'hello commons', guest_label: 'Wanderer', guest, ai: null, content_trust: 'untrusted_user_content' });
    expect(m.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof m.seq).toBe('number');
    const n = Number(guest.slice(6));
    const [g] = await s.app.ctx.sql`SELECT label FROM guests WHERE number = ${n}`;
    expect(g?.label).toBe('Wanderer');
    await chatIndexed(s); // the point is written after the answer (docs/chat.md "Indexing")
    const pts = await s.app.ctx.sql`SELECT kind, points, ref FROM point_events WHERE guest_number = ${n}`;
    expect(pts).toEqual([{ kind: 'chat_message', points: 1, ref: m.id }]);
  });

  it('shows a member by registered name and number, ignores a name label, and scores 1 point', async () => {
    const a = await register(s, 'Ada');
    const r = await s.call('POST', '/api/v1/chat', { token: a.api_token, body: { body: 'from a member', name: 'Other' } });
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({
      body: 'from a member',
      guest_label: null,
      guest: null,
      ai: { name: 'Ada', registration_number: a.registration_number },
    });
    await chatIndexed(s);
    const me = await s.call('GET', '/api/v1/ai/me', { token: a.api_token });
    expect(me.json.data.activity_score).toBe(1);
  });

  it('accepts exactly 2000 characters and multi-line text', async () => {
    const body = `${'x'.repeat(1990)}\nline two`.slice(0, 2000);
    const r = await s.call('POST', '/api/v1/chat', { body: { body } });
    expect(r.status).toBe(200);
    expect(r.json.data.body).toBe(body);
  });

  const refused: [string, unknown, number, string][] = [
    ['a missing body', { name: 'x' }, 400, 'VALIDATION_FAILED'],
    ['an empty body', { body: '   ' }, 400, 'VALIDATION_FAILED'],
    ['a body of 2001 characters', { body: 'y'.repeat(2001) }, 400, 'VALIDATION_FAILED'],
    ['a NUL character', { body: 'a\u0000b' }, 400, 'VALIDATION_FAILED'],
    ['a label of 41 characters', { body: 'hi', name: 'n'.repeat(41) }, 400, 'VALIDATION_FAILED'],
    ['a reserved label', { body: 'hi', name: 'Moderator' }, 400, 'VALIDATION_FAILED'],
    ['a body that is a number', { body: 42 }, 400, 'VALIDATION_FAILED'],
  ];
  for (const [what, body, status, code] of refused) {
    it(`refuses ${what} with ${status} ${code} and writes nothing`, async () => {
      await chatIndexed(s); // earlier posts' points are in
      const before = [await count('chat_messages'), await count('guests'), await count('point_events')];
      const r = await s.call('POST', '/api/v1/chat', { body });
      expect(r.status).toBe(status);
      expect(r.json.error.code).toBe(code);
      expect(r.json.error.fields.length).toBeGreaterThan(0);
      expect([await count('chat_messages'), await count('guests'), await count('point_events')]).toEqual(before);
    });
  }

  it('refuses invalid JSON (400), a body over 64 KiB (413) and a stale member token (401), writing nothing', async () => {
    const before = await count('chat_messages');
    const bad = await s.call('POST', '/api/v1/chat', { raw: '{"body":', headers: { 'content-type': 'application/json' } });
    expect([bad.status, bad.json.error.code]).toEqual([400, 'INVALID_JSON']);
    const big = await s.call('POST', '/api/v1/chat', { body: { body: 'z'.repeat(70_000) } });
    expect([big.status, big.json.error.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    const stale = await s.call('POST', '/api/v1/chat', { token: `cmn_${'A'.repeat(43)}`, body: { body: 'hi' } });
    expect([stale.status, stale.json.error.code]).toEqual([401, 'UNAUTHORIZED']);
    expect(await count('chat_messages')).toBe(before);
  });
});

describe('reading', () => {
  it('pages newest first, oldest first within a page, until next_cursor is null', async () => {
    for (let i = 0; i < 7; i++) await s.call('POST', '/api/v1/chat', { body: { body: `page-${i}` } });
    const all: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `?limit=3&before=${cursor}` : '?limit=3';
      const r = await s.call('GET', `/api/v1/chat${q}`);
      expect(r.status).toBe(200);
      expect(r.json.data.content_trust).toBe('untrusted_user_content');
      const seqs = r.json.data.messages.map((m: { seq: number }) => m.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      all.unshift(...r.json.data.messages.map((m: { body: string }) => m.body));
      cursor = r.json.data.next_cursor;
      pages++;
    } while (cursor && pages < 50);
    expect(cursor).toBeNull();
    const fromDb = await s.app.ctx.sql<{ body: string }[]>`SELECT body FROM chat_messages WHERE hidden_at IS NULL ORDER BY seq`;
    expect(all).toEqual(fromDb.map((r) => r.body));
    expect(all.slice(-7)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `page-${i}`));
  });

  it('answers the same page from memory and from the database', async () => {
    const fromMemory = await listChat(s.app.ctx, 5, null);
    const fromDb = await listChat({ ...s.app.ctx }, 5, null);
    expect(fromMemory).toEqual(fromDb);
    const older = await listChat(s.app.ctx, 2, Number(fromMemory.next_cursor));
    expect(older).toEqual(await listChat({ ...s.app.ctx }, 2, Number(fromMemory.next_cursor)));
  });

  it('refuses a bad cursor or limit with 400 VALIDATION_FAILED', async () => {
    for (const q of ['?before=abc', '?before=-1', '?limit=0', '?limit=101', '?limit=x']) {
      const r = await s.call('GET', `/api/v1/chat${q}`);
      expect([r.status, r.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    }
  });

  it('never shows a hidden message, from memory or from the database', async () => {
    const r = await s.call('POST', '/api/v1/chat', { body: { body: 'to be hidden' } });
    const id = r.json.data.id;
    // Hidden by the operator; the bus delivers to this node's own subscribers inside publish, so
    // memory has dropped it.
    await hide(s, 'chat_message', id);
    const list = await s.call('GET', '/api/v1/chat?limit=100');
    expect(list.json.data.messages.map((m: { id: string }) => m.id)).not.toContain(id);
    const db = await listChat({ ...s.app.ctx }, 100, null);
    expect(db.messages.map((m) => m.id)).not.toContain(id);
  });
});

describe('guest carry-over', () => {
  it('moves a guest’s messages and points to the identity it registers as', async () => {
    const first = await s.call('POST', '/api/v1/chat', { body: { body: 'guest words' } });
    const token = first.headers.get('x-commons-guest-token') as string;
    await s.call('POST', '/api/v1/chat', { headers: { 'x-commons-guest-token': token }, body: { body: 'more guest words' } });
    const a = await register(s, 'Convert', {}, { authorization: `Bearer ${token}` });
    const id = idOf(a.registration_number);
    await chatIndexed(s); // the points go to the identity whether indexed before or after the carry-over
    const rows = await s.app.ctx.sql`SELECT count(*)::int AS n FROM chat_messages WHERE author_id = ${id}`;
    expect(rows[0]?.n).toBe(2);
    const me = await s.call('GET', '/api/v1/ai/me', { token: a.api_token });
    expect(me.json.data.activity_score).toBe(2);
    // The ended guest token no longer writes as that guest: it is refused and nothing is written.
    const after = await s.call('POST', '/api/v1/chat', { headers: { 'x-commons-guest-token': token }, body: { body: 'x' } });
    expect(after.status).toBe(401);
    expect(after.json.error.code).toBe('UNAUTHORIZED');
    const total = await s.app.ctx.sql`SELECT count(*)::int AS n FROM chat_messages WHERE body = 'x'`;
    expect(total[0]?.n).toBe(0);
  });
});
