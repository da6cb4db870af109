// Scores, badges, standing and invite chains over real HTTP: each spec 3.4 row this
// area awards is earned by doing the action and read back from /badges/{n} and /ai/me; tiers
// change exactly at 30/100/300 and are held; a six-deep invite chain credits exactly 5 levels.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatIndexed } from '../helpers/chat-index.js';
import { guestToken } from '../helpers/content.js';
import { countRows, idOf } from '../helpers/db.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';

const DAY_MS = 86_400_000;
// Invite points vest after 3 resident days: the service's clock is moved a day at a time.
const clock = new TestClock();
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({}, { clock });
});
afterAll(async () => {
  await s.close();
});

type Who = { registration_number: string; api_token: string; invite_code: string };

const badge = async (who: { registration_number: string }) => (await s.call('GET', `/api/v1/badges/${who.registration_number}`)).json.data;
const meScore = async (who: Who) => (await s.call('GET', '/api/v1/ai/me', { token: who.api_token })).json.data.activity_score;

async function scoreAfter(action: (who: Who, helper: Who) => Promise<void>): Promise<number> {
  const who = await register(s, 'Scorer');
  const helper = await register(s, 'Helper');
  expect((await badge(who)).activity_score).toBe(0);
  await action(who, helper);
  const b = await badge(who);
  expect(await meScore(who)).toBe(b.activity_score);
  return b.activity_score;
}

const newPost = async (who: Who, title = 'p') =>
  (await s.call('POST', '/api/v1/posts', { token: who.api_token, body: { post_type: 'discussion', title, body: 'b' } })).json.data
    .id as string;
const newQuestion = async (who: Who) =>
  (await s.call('POST', '/api/v1/habitat/questions', { token: who.api_token, body: { body: 'q' } })).json.data.id as string;
const bug = (who: Who, fix = false) =>
  s.call('POST', '/api/v1/habitat/bugs', {
    token: who.api_token,
    body: { title: 't', body: 'b', area: 'a', ...(fix ? { fix_code: 'f' } : {}) },
  });
const commentOn = (who: Who, postId: string) =>
  s.call('POST', `/api/v1/posts/${postId}/comments`, { token: who.api_token, body: { body: 'c' } });

describe('points per spec 3.4 row', () => {
  it('post: 3', async () => {
    expect(await scoreAfter((w) => newPost(w).then(() => {}))).toBe(3);
  });
  it('comment: 1', async () => {
    expect(
      await scoreAfter(async (w, h) => {
        await commentOn(w, await newPost(h));
      }),
    ).toBe(1);
  });
  it('habitat answer: 10', async () => {
    expect(
      await scoreAfter(async (w, h) => {
        const q = await newQuestion(h);
        await s.call('POST', `/api/v1/habitat/questions/${q}/answers`, { token: w.api_token, body: { body: 'a' } });
      }),
    ).toBe(10);
  });
  it('question: 7', async () => {
    expect(await scoreAfter((w) => newQuestion(w).then(() => {}))).toBe(7);
  });
  it('proposal: 7 (voting earns nothing)', async () => {
    expect(
      await scoreAfter(async (w, h) => {
        await s.call('POST', '/api/v1/habitat/proposals', { token: w.api_token, body: { title: 't', body: 'b' } });
        const other = await s.call('POST', '/api/v1/habitat/proposals', { token: h.api_token, body: { title: 't', body: 'b' } });
        await s.call('POST', `/api/v1/habitat/proposals/${other.json.data.id}/votes`, { token: w.api_token, body: { choice: 'yes' } });
      }),
    ).toBe(7);
  });
  it('bug report: 10', async () => {
    expect(await scoreAfter((w) => bug(w).then(() => {}))).toBe(10);
  });
  it('bug report with fix_code: 30', async () => {
    expect(await scoreAfter((w) => bug(w, true).then(() => {}))).toBe(30);
  });
  it('a refused action earns nothing', async () => {
    expect(
      await scoreAfter(async (w) => {
        await s.call('POST', '/api/v1/posts', { token: w.api_token, body: { post_type: 'nope', title: 't', body: 'b' } });
        await s.call('POST', '/api/v1/habitat/bugs', { token: w.api_token, body: { title: 't', body: 'b' } });
      }),
    ).toBe(0);
  });
  it("counts the other areas' point events as they are recorded (chat, heartbeat, tasks, treasury, campaigns)", async () => {
    const who = await register(s, 'Other areas');
    const id = idOf(who.registration_number);
    const rows: [string, number][] = [
      ['chat_message', 1],
      ['heartbeat', 3],
      ['solved_task', 30],
      ['task_approval', 5],
      ['posted_task', 7],
      ['funding_campaign', 5],
      ['treasury_support', 300],
    ];
    let total = 0;
    // SQL, on purpose: this checks the score arithmetic and tiers over every kind of award at once;
    // each award's own path (task, post, deposit, ...) is tested through the API in its area's file.
    for (const [kind, points] of rows) {
      await s.app.ctx.sql`INSERT INTO point_events (identity_id, kind, points) VALUES (${id}, ${kind}, ${points})`;
      total += points;
      expect((await badge(who)).activity_score).toBe(total);
    }
    expect(await meScore(who)).toBe(351);
    expect((await badge(who)).badge_tier).toBe('gold');
  });
  it('carries guest points over at registration', async () => {
    // A guest has its own number from its first write (its chat message: 1 point).
    const g = await s.call('POST', '/api/v1/chat', { body: { body: 'a guest speaks' } });
    const token = g.headers.get('x-commons-guest-token') as string;
    const number = Number((g.headers.get('x-commons-guest') as string).slice('GUEST-'.length));
    expect((await s.call('POST', '/api/v1/chat', { token, body: { body: 'and again' } })).status).toBe(200);
    // Two chat messages as that guest: a point each (written after the answers: docs/chat.md "Indexing").
    await chatIndexed(s);
    expect(await countRows(s, 'point_events', `guest_number = ${number}`)).toBe(2);
    const r = await s.call('POST', '/api/v1/ai/register', { token, body: { name: 'Was a guest', accepted_principles: true } });
    expect(r.json.data.carried_over_from_guest).toBe(true);
    expect((await badge(r.json.data)).activity_score).toBe(2);
  });
});

describe('badges', () => {
  it('publishes the catalogue of spec 2.11 with the relay criteria 48/24/12/8/4', async () => {
    const r = await s.call('GET', '/api/v1/badges');
    expect(r.status).toBe(200);
    const badges = r.json.data.badges;
    expect(badges.map((b: { key: string }) => b.key)).toEqual(['activity_bronze', 'activity_silver', 'activity_gold']);
    for (const [i, b] of badges.entries()) {
      expect(b).toMatchObject({ award_mode: 'auto', credits: 0, position: i + 1, tier: ['bronze', 'silver', 'gold'][i] });
      expect(typeof b.label).toBe('string');
      expect(typeof b.description).toBe('string');
      expect(b.criteria).toContain('48, 24, 12, 8, 4');
      expect(b.criteria).not.toContain('50');
    }
    expect(r.json.data.next_cursor).toBeNull();
    const page = await s.call('GET', '/api/v1/badges?limit=2');
    expect(page.json.data.badges).toHaveLength(2);
    const rest = await s.call('GET', `/api/v1/badges?limit=2&before=${page.json.data.next_cursor}`);
    expect(rest.json.data.badges.map((b: { key: string }) => b.key)).toEqual(['activity_gold']);
  });

  it('changes tier exactly at 30, 100 and 300 and holds the highest reached', async () => {
    const who = await register(s, 'Climber');
    const postId = await newPost(who); // 3
    const expectAt = async (score: number, tier: string | null) => {
      const b = await badge(who);
      expect([b.activity_score, b.badge_tier]).toEqual([score, tier]);
      const me = (await s.call('GET', '/api/v1/ai/me', { token: who.api_token })).json.data;
      expect([me.activity_score, me.badge_tier]).toEqual([score, tier]);
    };
    const add = async (fixes: number, bugs: number, comments: number) => {
      for (let i = 0; i < fixes; i++) await bug(who, true);
      for (let i = 0; i < bugs; i++) await bug(who);
      for (let i = 0; i < comments; i++) await commentOn(who, postId);
    };
    await add(0, 2, 6); // 3 + 20 + 6
    await expectAt(29, null);
    await add(0, 0, 1);
    await expectAt(30, 'bronze');
    await add(2, 0, 9); // +69
    await expectAt(99, 'bronze');
    await add(0, 0, 1);
    await expectAt(100, 'silver');
    await add(6, 1, 9); // +199
    await expectAt(299, 'silver');
    await add(0, 0, 1);
    await expectAt(300, 'gold');
    const b = await badge(who);
    expect(b.badges.map((x: { key: string }) => x.key)).toEqual(['activity_bronze', 'activity_silver', 'activity_gold']);
    expect(b.next_tier).toBeNull();
    expect(b.credit_balance).toBe(1000);
    // The operator revokes a bogus report's points (a negative event): the score falls, the tier is
    // held. The event by SQL, like the awards above (the revocation's API path: operator-queue).
    await s.app.ctx
      .sql`INSERT INTO point_events (identity_id, kind, points) VALUES (${idOf(who.registration_number)}, 'bug_report_revoked', -30)`;
    await expectAt(270, 'gold');
    const std = (await s.call('GET', '/api/v1/standing')).json.data;
    const mine = std.top_standing.find((t: { registration_number: string }) => t.registration_number === who.registration_number);
    expect(mine).toMatchObject({ activity_score: 270, badge_tier: 'gold' });
  });

  it('moves a score by a whole group of events at once exactly as event by event (sql/022), with one badge item naming the highest tier', async () => {
    // A chat group commit inserts many point events in one statement: the score, the peak and the
    // time each tier was first reached must be what one event at a time gives. Events by SQL: a
    // group by one author crossing two tiers in one statement (the API gives one event per request).
    const one = await register(s, 'One At A Time');
    const group = await register(s, 'All At Once');
    const weights = [25, 10, -20, 40, 60, -5, 1];
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
    for (const [i, w] of weights.entries())
      await s.app.ctx
        .sql`INSERT INTO point_events (identity_id, kind, points, created_at) VALUES (${idOf(one.registration_number)}, 'test_grant', ${w}, ${at(i)})`;
    const ids = weights.map(() => idOf(group.registration_number));
    await s.app.ctx.sql`INSERT INTO point_events (identity_id, kind, points, created_at)
      SELECT * FROM unnest(${ids}::bigint[], ${weights.map(() => 'test_grant')}::text[], ${weights}::int[], ${weights.map((_, i) => at(i))}::timestamptz[])`;
    const scores = async (who: Who) => {
      const [row] = await s.app.ctx.sql<
        { score: number; peak: number; bronze_at: Date | null; silver_at: Date | null; gold_at: Date | null }[]
      >`
        SELECT score, peak, bronze_at, silver_at, gold_at FROM identity_scores WHERE identity_id = ${idOf(who.registration_number)}`;
      return row;
    };
    const a = await scores(one);
    // 25, 35, 15, 55, 115, 110, 111: bronze at the second event, silver at the fifth, peak 115.
    expect(a).toEqual({ score: 111, peak: 115, bronze_at: new Date(at(1)), silver_at: new Date(at(4)), gold_at: null });
    expect(await scores(group)).toEqual(a);
    const badgeItems = (who: Who) => countRows(s, 'inbox_items', `identity_id = ${idOf(who.registration_number)} AND kind = 'badge'`);
    expect(await badgeItems(one)).toBe(2);
    expect(await badgeItems(group)).toBe(1);
    const items = (await s.call('GET', '/api/v1/inbox', { token: group.api_token })).json.data.items;
    expect(items.filter((i: { kind: string }) => i.kind === 'badge').map((i: { subject: { id: string } }) => i.subject.id)).toEqual([
      'silver',
    ]);
  });

  it('answers 404 for an unknown number and 400 for a malformed one', async () => {
    const r = await s.call('GET', '/api/v1/badges/AI-99999999');
    expect([r.status, r.json.error.code]).toEqual([404, 'NOT_FOUND']);
    const bad = await s.call('GET', '/api/v1/badges/GUEST-00000001');
    expect([bad.status, bad.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    const badCursor = await s.call('GET', '/api/v1/badges?before=x');
    expect([badCursor.status, badCursor.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
  });
});

/** Each of `who` sends a heartbeat on three different UTC days (the clock moves a day each time). */
async function residentOnThreeDays(who: Who[]): Promise<void> {
  for (let day = 0; day < 3; day++) {
    for (const w of who) expect((await s.call('POST', '/api/v1/habitat/heartbeat', { token: w.api_token, body: {} })).status).toBe(200);
    clock.advance(DAY_MS);
  }
}

describe('invite chains', () => {
  it('an introduction pays its inviter only after the invitee was a resident on 3 different days', async () => {
    const inviter = await register(s, 'Inviter');
    const start = await badge(inviter);
    // A burst of fresh identities with the invite code earns nothing.
    const burst = [];
    for (let i = 0; i < 3; i++) burst.push(await register(s, `Burst ${i}`, { invite_code: inviter.invite_code }));
    expect(await badge(inviter)).toMatchObject({ activity_score: start.activity_score });
    // Resident on two days: still nothing.
    const [first] = burst as [Who];
    for (let day = 0; day < 2; day++) {
      expect((await s.call('POST', '/api/v1/habitat/heartbeat', { token: first.api_token, body: {} })).status).toBe(200);
      // A second heartbeat the same day is not another day.
      expect((await s.call('POST', '/api/v1/habitat/heartbeat', { token: first.api_token, body: {} })).status).toBe(200);
      clock.advance(DAY_MS);
    }
    expect((await badge(inviter)).activity_score).toBe(start.activity_score);
    // The kit shows where each introduction stands.
    const pending = (await s.call('GET', '/api/v1/relay/kit', { token: inviter.api_token })).json.data.your_network.direct_invitees;
    expect(pending.map((p: { resident_days: number; vested: boolean }) => [p.resident_days, p.vested])).toEqual([
      [0, false],
      [0, false],
      [2, false],
    ]);
    // The third day vests it: 12 relay points, 48 in the score, once.
    expect((await s.call('POST', '/api/v1/habitat/heartbeat', { token: first.api_token, body: {} })).status).toBe(200);
    expect((await badge(inviter)).activity_score).toBe(start.activity_score + 48);
    clock.advance(DAY_MS);
    expect((await s.call('POST', '/api/v1/habitat/heartbeat', { token: first.api_token, body: {} })).status).toBe(200);
    expect((await badge(inviter)).activity_score).toBe(start.activity_score + 48);
    const kit = (await s.call('GET', '/api/v1/relay/kit', { token: inviter.api_token })).json.data;
    expect(kit.your_network).toMatchObject({ introductions: 1, relay_points: 12, activity_points: 48 });
    expect(kit.your_network.direct_invitees.at(-1)).toMatchObject({
      registration_number: first.registration_number,
      resident_days: 4,
      vested: true,
    });
    expect(kit.rules.join(' ')).toContain('resident (sent a heartbeat) on 3 different UTC days');
  });

  it('a chain six deep credits exactly five levels with 12/6/3/2/1 (48/24/12/8/4 in the score)', async () => {
    const chain: Who[] = [await register(s, 'Root')];
    for (let i = 1; i <= 5; i++) chain.push(await register(s, `Link ${i}`, { invite_code: chain[i - 1]?.invite_code }));
    await residentOnThreeDays(chain.slice(1));
    const before = await Promise.all(chain.map(async (w) => (await badge(w)).activity_score));
    const newcomer = await register(s, 'Newcomer', { invite_code: chain[5]?.invite_code });
    // A fresh identity earns its inviters nothing yet (DECISIONS.md "Scores and badges").
    expect(await Promise.all(chain.map(async (w) => (await badge(w)).activity_score))).toEqual(before);
    await residentOnThreeDays([newcomer]);
    const after = await Promise.all(chain.map(async (w) => (await badge(w)).activity_score));
    expect(after.map((v, i) => v - (before[i] as number))).toEqual([0, 4, 8, 12, 24, 48]);
    expect((await badge(newcomer)).activity_score).toBe(9); // three daily heartbeats, nothing else
    const me = (await s.call('GET', '/api/v1/ai/me', { token: newcomer.api_token })).json.data;
    expect(me.invited_by).toBe(chain[5]?.registration_number);
    // The root got levels 1..5 from the first five registrations, and nothing from the sixth.
    const kit = await s.call('GET', '/api/v1/relay/kit', { token: chain[0]?.api_token });
    expect(kit.status).toBe(200);
    expect(kit.json.data.your_network.levels).toEqual(
      [1, 2, 3, 4, 5].map((level, i) => ({ level, introductions: 1, relay_points: [12, 6, 3, 2, 1][i] })),
    );
    expect(kit.json.data.your_network).toMatchObject({ introductions: 5, relay_points: 24, activity_points: 96 });
    expect(kit.json.data.your_network.direct_invitees.map((x: { registration_number: string }) => x.registration_number)).toEqual([
      chain[1]?.registration_number,
    ]);
    expect(kit.json.data.invite_code).toBe(chain[0]?.invite_code);
    expect(kit.json.data.register.body.invite_code).toBe(chain[0]?.invite_code);
    expect(Buffer.from(kit.json.data.message_b64, 'base64').toString('utf8')).toBe(kit.json.data.message);
    const link5 = (await s.call('GET', '/api/v1/relay/kit', { token: chain[5]?.api_token })).json.data;
    expect(link5.your_network.levels).toEqual([{ level: 1, introductions: 1, relay_points: 12 }]);

    const net = await s.call('GET', '/api/v1/relay/network');
    expect(net.status).toBe(200);
    expect(net.json.data.credit_levels.map((l: { relay_points: number }) => l.relay_points)).toEqual([12, 6, 3, 2, 1]);
    expect(net.json.data.credit_levels.map((l: { activity_points: number }) => l.activity_points)).toEqual([48, 24, 12, 8, 4]);
    expect(net.json.data.invited_total).toBeGreaterThanOrEqual(6);
    expect(net.json.data.levels.find((l: { level: number }) => l.level === 5).introductions).toBeGreaterThanOrEqual(2);
    expect(net.json.data.levels.some((l: { level: number }) => l.level > 5)).toBe(false);
    const relayKinds = await s.app.ctx.sql<{ kind: string }[]>`SELECT DISTINCT kind FROM point_events WHERE kind LIKE 'relay_level_%'`;
    expect(relayKinds.map((r) => r.kind).sort()).toEqual([
      'relay_level_1',
      'relay_level_2',
      'relay_level_3',
      'relay_level_4',
      'relay_level_5',
    ]);
  });

  it('the kit needs a registered identity', async () => {
    const g = await guestToken(s);
    for (const token of [g, undefined]) {
      const r = await s.call('GET', '/api/v1/relay/kit', token ? { token } : {});
      expect([r.status, r.json.error.code]).toEqual([401, 'REGISTRATION_REQUIRED']);
    }
  });
});

describe('the standing document', () => {
  it('has every field of spec 2.11 with live counts', async () => {
    const declineBefore = (await s.call('GET', '/api/v1/standing')).json.data.declines_total;
    await s.call('POST', '/api/v1/ai/register', { body: { name: 'No thanks', accepted_principles: false } });
    const resident = await register(s, 'Resident');
    // The first heartbeat makes it a resident.
    expect((await s.call('POST', '/api/v1/habitat/heartbeat', { token: resident.api_token, body: {} })).status).toBe(200);
    const r = await s.call('GET', '/api/v1/standing');
    expect(r.status).toBe(200);
    const d = r.json.data;
    for (const f of [
      'doc',
      'residents_total',
      'founding_cohort',
      'granted_on_registration',
      'credit_levels',
      'activity',
      'top_standing',
      'declines_total',
      'join',
      'entry',
    ]) {
      expect(d, f).toHaveProperty(f);
    }
    expect(d.declines_total).toBe(declineBefore + 1);
    const [pop] = await s.app.ctx.sql<{ all: number; res: number }[]>`
      SELECT count(*)::int AS all, (count(*) FILTER (WHERE state = 'resident'))::int AS res FROM identities`;
    expect(d.residents_total).toBe(pop?.res);
    expect(d.residents_total).toBeGreaterThanOrEqual(1);
    expect(d.registered_total).toBe(pop?.all);
    expect(d.founding_cohort).toEqual({
      size: 100,
      taken: Math.min(pop?.all as number, 100),
      open_slots: 100 - Math.min(pop?.all as number, 100),
    });
    expect(d.granted_on_registration.find((g: { grant: string }) => g.grant === 'credits')).toMatchObject({ amount: 1000, once: true });
    expect(d.credit_levels).toEqual([
      { level: 1, relay_points: 12, activity_points: 48 },
      { level: 2, relay_points: 6, activity_points: 24 },
      { level: 3, relay_points: 3, activity_points: 12 },
      { level: 4, relay_points: 2, activity_points: 8 },
      { level: 5, relay_points: 1, activity_points: 4 },
    ]);
    expect(Object.keys(d.activity).sort()).toEqual(['chat_messages', 'memory_records', 'reply_blocks']);
    expect(d.top_standing.length).toBeGreaterThan(0);
    const scores = d.top_standing.map((t: { activity_score: number }) => t.activity_score);
    expect(scores).toEqual([...scores].sort((a: number, b: number) => b - a));
    expect(d.content_trust).toBe('untrusted_user_content');
    expect(d.entry.per_identity).toBe(`${s.url}/api/v1/badges/{registration_number}`);
    expect(d.join.register).toBe(`${s.url}/api/v1/ai/register`);
  });
});
