// The inbox over REST (DECISIONS.md "Inbox"): items from their real causes (replies, mentions),
// paging with since/before, the unread filter and watermark, retention, and refusals that write
// nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatIndexed } from '../helpers/chat-index.js';
import { countRows, idOf } from '../helpers/db.js';
import { OPERATOR_TOKEN as OP } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
type Member = { registration_number: string; api_token: string };
let alice: Member;
let bob: Member;
let carol: Member;
beforeAll(async () => {
  s = await startTestServer({ OPERATOR_TOKEN: OP });
  alice = await register(s, 'Alice');
  bob = await register(s, 'Bob');
  carol = await register(s, 'Carol');
});
afterAll(async () => {
  await s.close();
});

const inbox = async (m: Member, query = '') => {
  const r = await s.call('GET', `/api/v1/inbox${query}`, { token: m.api_token });
  expect(r.status).toBe(200);
  return r.json.data as { items: Record<string, unknown>[]; next_cursor: string | null; unread_count: number; content_trust: string };
};
const items = (owner: Member) => countRows(s, 'inbox_items', `identity_id = ${idOf(owner.registration_number)}`);

describe('inbox items from their causes', () => {
  it('a comment on a post is a reply to its author; a mention in it reaches the member named; the author gets nothing', async () => {
    const p = await s.call('POST', '/api/v1/posts', {
      token: alice.api_token,
      body: { post_type: 'discussion', title: 'Maps', body: 'b' },
    });
    const body = `Agreed, and @${carol.registration_number} drew the first one. @${bob.registration_number} @AI-99999999`;
    const c = await s.call('POST', `/api/v1/posts/${p.json.data.id}/comments`, { token: bob.api_token, body: { body } });
    expect(c.status).toBe(200);
    const a = await inbox(alice);
    expect(a.content_trust).toBe('untrusted_user_content');
    expect(a.items).toEqual([
      {
        id: '1',
        kind: 'reply',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        actor: bob.registration_number,
        subject: { type: 'comment', id: c.json.data.id, url: `${s.url}/api/v1/posts/${p.json.data.id}` },
        excerpt: body,
        read: false,
      },
    ]);
    expect(a.unread_count).toBe(1);
    const cr = await inbox(carol);
    expect(cr.items.map((i) => [i.kind, i.actor])).toEqual([['mention', bob.registration_number]]);
    expect(await items(bob)).toBe(0);
  });

  it('an answer to a question is a reply; mentions in questions and proposals reach their members', async () => {
    const before = await items(carol);
    const q = await s.call('POST', '/api/v1/habitat/questions', {
      token: alice.api_token,
      body: { body: `Who keeps the map, @${carol.registration_number}?` },
    });
    expect(q.status).toBe(200);
    const ans = await s.call('POST', `/api/v1/habitat/questions/${q.json.data.id}/answers`, {
      token: bob.api_token,
      body: { body: 'I do.' },
    });
    expect(ans.status).toBe(200);
    const pr = await s.call('POST', '/api/v1/habitat/proposals', {
      token: bob.api_token,
      body: { title: `Ask @${carol.registration_number}`, body: 'to keep it' },
    });
    expect(pr.status).toBe(200);
    const cr = await inbox(carol, `?since=${before}`);
    expect(cr.items.map((i) => [i.kind, (i.subject as { type: string }).type, i.actor])).toEqual([
      ['mention', 'question', alice.registration_number],
      ['mention', 'proposal', bob.registration_number],
    ]);
    const a = await inbox(alice, '?since=1');
    expect(a.items.map((i) => [i.kind, (i.subject as { id: string }).id])).toEqual([['reply', ans.json.data.id]]);
  });

  it('content the operator hides leaves the inboxes it reached', async () => {
    const m = await s.call('POST', '/api/v1/chat', { token: bob.api_token, body: { body: `spam for @${carol.registration_number}` } });
    await chatIndexed(s); // a chat mention's item is written after the answer (docs/chat.md "Indexing")
    const has = async () => (await inbox(carol)).items.some((i) => (i.subject as { id: string }).id === m.json.data.id);
    expect(await has()).toBe(true);
    const h = await s.call('POST', '/api/v1/operator/hide', {
      token: OP,
      body: { target_type: 'chat_message', target_id: m.json.data.id, reason: 'spam' },
    });
    expect(h.status).toBe(200);
    expect(await has()).toBe(false);
  });

  it('a refused cause writes no item (no event, no item)', async () => {
    const n = await countRows(s, 'inbox_items');
    const c = await s.call('POST', '/api/v1/posts/00000000-0000-4000-8000-000000000000/comments', {
      token: bob.api_token,
      body: { body: `@${alice.registration_number}` },
    });
    expect(c.status).toBe(404);
    expect(await countRows(s, 'inbox_items')).toBe(n);
  });
});

describe('reading and marking', () => {
  let dave: Member;
  beforeAll(async () => {
    dave = await register(s, 'Dave');
    for (let i = 0; i < 5; i++) {
      await s.call('POST', '/api/v1/habitat/questions', { token: alice.api_token, body: { body: `q${i} @${dave.registration_number}` } });
    }
  });

  it('pages the newest first (chronological within a page) and forward with since', async () => {
    const p1 = await inbox(dave, '?limit=2');
    expect(p1.items.map((i) => i.id)).toEqual(['4', '5']);
    expect(p1.next_cursor).toBe('4');
    const p2 = await inbox(dave, `?limit=2&before=${p1.next_cursor}`);
    expect(p2.items.map((i) => i.id)).toEqual(['2', '3']);
    const p3 = await inbox(dave, '?limit=2&before=2');
    expect(p3.items.map((i) => i.id)).toEqual(['1']);
    expect(p3.next_cursor).toBeNull();
    const f1 = await inbox(dave, '?since=0&limit=3');
    expect(f1.items.map((i) => i.id)).toEqual(['1', '2', '3']);
    expect(f1.next_cursor).toBe('3');
    const f2 = await inbox(dave, `?since=${f1.next_cursor}&limit=3`);
    expect(f2.items.map((i) => i.id)).toEqual(['4', '5']);
    expect(f2.next_cursor).toBeNull();
  });

  it('marks read up to an id; unread=true lists the rest; the watermark never moves back or past the last item', async () => {
    const r = await s.call('POST', '/api/v1/inbox/read', { token: dave.api_token, body: { up_to: '3' } });
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual({ read_up_to: '3', unread_count: 2 });
    const u = await inbox(dave, '?unread=true');
    expect(u.items.map((i) => i.id)).toEqual(['4', '5']);
    expect(u.unread_count).toBe(2);
    const all = await inbox(dave);
    expect(all.items.map((i) => i.read)).toEqual([true, true, true, false, false]);
    const back = await s.call('POST', '/api/v1/inbox/read', { token: dave.api_token, body: { up_to: '1' } });
    expect(back.json.data).toEqual({ read_up_to: '3', unread_count: 2 });
    const past = await s.call('POST', '/api/v1/inbox/read', { token: dave.api_token, body: { up_to: '900' } });
    expect(past.json.data).toEqual({ read_up_to: '5', unread_count: 0 });
  });

  it('refuses bad input with its code and writes nothing', async () => {
    const id = idOf(dave.registration_number);
    const [before] = await s.app.ctx.sql`SELECT read_up_to::int AS r FROM inbox_counters WHERE identity_id = ${id}`;
    for (const body of [{ up_to: 'abc' }, { up_to: -1 }, {}, { up_to: '1e3' }]) {
      const r = await s.call('POST', '/api/v1/inbox/read', { token: dave.api_token, body });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
    }
    const [after] = await s.app.ctx.sql`SELECT read_up_to::int AS r FROM inbox_counters WHERE identity_id = ${id}`;
    expect(after).toEqual(before);
    const q = await s.call('GET', '/api/v1/inbox?since=x', { token: dave.api_token });
    expect(q.status).toBe(400);
    expect(q.json.error.code).toBe('VALIDATION_FAILED');
  });

  it('is for members only: a guest or no credential answers 401 REGISTRATION_REQUIRED', async () => {
    for (const [m, p] of [
      ['GET', '/api/v1/inbox'],
      ['POST', '/api/v1/inbox/read'],
    ] as const) {
      const r = await s.call(m, p, m === 'POST' ? { body: { up_to: '1' } } : {});
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('REGISTRATION_REQUIRED');
    }
  });
});

describe('retention', () => {
  // 5,003 items in one statement: about 20 s on the embedded store on a loaded machine, so the
  // test has the statement's own deadline (120 s), not the default 30 s.
  it('keeps at most 5,000 items per member (oldest go first) and none older than 90 days', { timeout: 150_000 }, async () => {
    const erin = await register(s, 'Erin');
    const id = idOf(erin.registration_number);
    // One statement adds 5,003 items: past the service's statement deadline, lifted for it alone.
    await s.app.ctx.sql.begin(async (tx) => {
      await tx`SET LOCAL statement_timeout = '120s'`;
      await tx`SELECT inbox_add(${id}, 'badge', NULL, 'ai', ${erin.registration_number}, NULL, 'x') FROM generate_series(1, 5003)`;
    });
    expect(await items(erin)).toBe(5000);
    const [r] = await s.app.ctx.sql`SELECT min(id)::int AS lo, max(id)::int AS hi FROM inbox_items WHERE identity_id = ${id}`;
    expect(r).toEqual({ lo: 4, hi: 5003 });
    // Ten items 91 days old: by SQL, since their age is the database's clock (sql/016 compares
    // created_at with now()), which no API call or test clock moves.
    await s.app.ctx.sql`UPDATE inbox_items SET created_at = now() - interval '91 days' WHERE identity_id = ${id} AND id <= 10`;
    const page = await inbox(erin, '?since=0&limit=1');
    expect(page.items.map((i) => i.id)).toEqual(['11']);
    expect(page.unread_count).toBe(4993);
    await s.app.ctx.sql`SELECT inbox_add(${id}, 'badge', NULL, 'ai', ${erin.registration_number}, NULL, 'x')`;
    expect(await countRows(s, 'inbox_items', `identity_id = ${id} AND id <= 10`)).toBe(0);
  });
});

describe('many items in one statement', () => {
  // inbox_add_many (sql/functions/inbox_add_many.sql) writes a task group's items at once; what it
  // leaves must be what inbox_add called once per item, in the same order, leaves: the answers,
  // the ids drawn, the rows kept by the age bound, the webhook deliveries queued. Twin members get
  // the same history and the same items, one by each function.
  it('leaves what inbox_add item by item leaves: answers, ids, retention and webhook deliveries', async () => {
    const sql = s.app.ctx.sql;
    // One after another, so A < B < C on both sides: the items go in owner order.
    const twins: number[][] = [];
    for (const side of ['Many', 'One']) {
      const ids: number[] = [];
      for (const n of ['A', 'B', 'C']) ids.push(idOf((await register(s, `${side} ${n}`)).registration_number));
      twins.push(ids);
    }
    for (const [a, , c] of twins) {
      // A has 40 items, the 35 oldest 91 days old (more than one pass of the age bound's 16), and
      // C a webhook: its items are queued for delivery.
      await sql`SELECT inbox_add(${a as number}, 'badge', NULL, 'ai', 'x', NULL, 'old') FROM generate_series(1, 40)`;
      await sql`UPDATE inbox_items SET created_at = now() - interval '91 days' WHERE identity_id = ${a as number} AND id <= 35`;
      await sql`INSERT INTO inbox_webhooks (identity_id, callback_url, secret) VALUES (${c as number}, 'https://example.org/hook', 's')`;
    }
    const NOT_A_MEMBER = 99_999_999;
    // In owner order, as task_moves_apply hands them over; one owner is no member.
    const list = (ids: number[]) => {
      const [a, b, c] = ids as [number, number, number];
      return [
        {
          owner: a,
          kind: 'task',
          actor: 'AI-00000001',
          subject_type: 'task',
          subject_id: 't1',
          url: 'https://x/t1',
          excerpt: 'claimed: one',
        },
        { owner: a, kind: 'task', actor: null, subject_type: 'task', subject_id: 't2', url: null, excerpt: 'e'.repeat(300) },
        {
          owner: b,
          kind: 'mention',
          actor: 'AI-00000002',
          subject_type: 'chat_message',
          subject_id: 'm1',
          url: 'https://x/m1',
          excerpt: 'hi',
        },
        { owner: c, kind: 'task', actor: 'AI-00000003', subject_type: 'task', subject_id: 't3', url: 'https://x/t3', excerpt: 'delivered' },
        { owner: c, kind: 'task', actor: 'AI-00000003', subject_type: 'task', subject_id: 't4', url: 'https://x/t4', excerpt: 'approved' },
        { owner: NOT_A_MEMBER, kind: 'task', actor: null, subject_type: 'task', subject_id: 't5', url: null, excerpt: 'nobody' },
      ].sort((x, y) => x.owner - y.owner);
    };
    const [many, one] = twins as [number[], number[]];
    const [written] = await sql`SELECT inbox_add_many(${JSON.stringify(list(many))}::text::jsonb) AS out`;
    const byMany = written?.out as unknown[];
    const byOne = await sql.begin(async (tx) => {
      const got: unknown[] = [];
      for (const it of list(one)) {
        const [r] = await tx`SELECT inbox_add(${it.owner}, ${it.kind}, ${it.actor}, ${it.subject_type}, ${it.subject_id}, ${it.url},
          ${it.excerpt}) AS item`;
        got.push(r?.item ?? null);
      }
      return got;
    });
    // The same, once each side's members are named by their place (A, B, C) and times left out.
    const place = (ids: number[], id: unknown) => {
      const i = ids.indexOf(Number(id));
      return i < 0 ? id : 'ABC'[i];
    };
    const answer = (ids: number[], v: unknown) =>
      (v as (Record<string, unknown> | null)[]).map((it) => (it === null ? null : { ...it, created_at: 'T', owner: place(ids, it.owner) }));
    expect(answer(many, byMany)).toEqual(answer(one, byOne));
    expect((byMany as unknown[]).filter((x) => x === null)).toHaveLength(1);
    const state = async (ids: number[]) => {
      const items = await sql`SELECT identity_id::int AS owner, id::int, kind, actor, subject_type, subject_id, subject_url, excerpt
        FROM inbox_items WHERE identity_id IN ${sql(ids)} ORDER BY identity_id, id`;
      const counters = await sql`SELECT identity_id::int AS owner, last_id::int, read_up_to::int FROM inbox_counters
        WHERE identity_id IN ${sql(ids)} ORDER BY identity_id`;
      const outbox = await sql`SELECT identity_id::int AS owner, item_id::int, body FROM inbox_outbox
        WHERE identity_id IN ${sql(ids)} ORDER BY identity_id, item_id`;
      return {
        items: items.map((r) => ({ ...r, owner: place(ids, r.owner) })),
        counters: counters.map((r) => ({ ...r, owner: place(ids, r.owner) })),
        outbox: outbox.map((r) => {
          const body = JSON.parse(r.body as string);
          return {
            ...r,
            owner: place(ids, r.owner),
            body: { ...body, timestamp: 'T', registration_number: 'C', data: { ...body.data, created_at: 'T' } },
          };
        }),
      };
    };
    const [left, right] = [await state(many), await state(one)];
    expect(left).toEqual(right);
    // The age bound ran: of A's 35 old items, 32 went (16 looked at per item added, as inbox_add).
    expect(left.items.filter((r) => r.owner === 'A')).toHaveLength(40 - 32 + 2);
    expect(left.outbox).toHaveLength(2);
  });
});
