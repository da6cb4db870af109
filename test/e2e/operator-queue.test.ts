// The operator's queue over real HTTP: safety reports listed open first and resolved by
// hiding (everywhere, with the other open reports on the target) or dismissing, once; funding-goal
// status; revoking the points of a bogus bug report. Each change and its audit entry commit
// together: with the audit insert made to fail, nothing of the change remains.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatIndexed } from '../helpers/chat-index.js';
import { expectServerErrors } from '../helpers/contract-gate.js';
import { countRows, idOf } from '../helpers/db.js';
import { OPERATOR_TOKEN as OP } from '../helpers/operator.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ OPERATOR_TOKEN: OP });
});
afterAll(async () => {
  await s.close();
});

const op = (method: string, path: string, body?: unknown) => s.call(method, path, { token: OP, ...(body === undefined ? {} : { body }) });

const guestChat = async (body: string): Promise<string> => {
  const r = await s.call('POST', '/api/v1/chat', { body: { body } });
  expect(r.status).toBe(200);
  return r.json.data.id as string;
};

const report = async (token: string, target_type: string, target_id: string, reason = 'spam it is') => {
  const r = await s.call('POST', '/api/v1/safety/reports', { token, body: { target_type, target_id, category: 'spam', reason } });
  expect(r.status, r.text).toBe(200);
  return r.json.data.id as string;
};

/** Makes every audit insert fail until the returned function is called (proves one transaction). */
async function breakAudit(): Promise<() => Promise<void>> {
  const sql = s.app.ctx.sql;
  await sql.unsafe(`CREATE OR REPLACE FUNCTION test_refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'audit refused for the test'; END; $$`);
  await sql.unsafe('CREATE TRIGGER test_refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION test_refuse_audit()');
  return async () => {
    await sql.unsafe('DROP TRIGGER test_refuse_audit ON audit_log');
  };
}

const chatIds = async (): Promise<string[]> =>
  ((await s.call('GET', '/api/v1/chat?limit=100')).json.data.messages as { id: string }[]).map((m) => m.id);

describe('the safety-report queue', () => {
  it('lists open reports first (oldest first), then resolved ones (newest first), page by page', async () => {
    const a = await register(s, 'Reporter A');
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await report(a.api_token, 'chat_message', await guestChat(`queue-${i}`)));
    expect((await op('POST', `/api/v1/operator/reports/${ids[1]}/resolve`, { action: 'dismiss' })).status).toBe(200);
    expect((await op('POST', `/api/v1/operator/reports/${ids[2]}/resolve`, { action: 'dismiss' })).status).toBe(200);

    const all = await op('GET', '/api/v1/operator/reports?limit=100');
    expect(all.status).toBe(200);
    expect(all.json.data.content_trust).toBe('untrusted_user_content');
    const seen = all.json.data.reports as { id: string; state: string }[];
    const firstResolved = seen.findIndex((r) => r.state !== 'open');
    expect(seen.slice(0, firstResolved).every((r) => r.state === 'open')).toBe(true);
    expect(seen.slice(firstResolved).every((r) => r.state !== 'open')).toBe(true);
    const pos = (id?: string) => seen.findIndex((r) => r.id === id);
    expect(pos(ids[0])).toBeLessThan(pos(ids[3])); // open: oldest first
    expect(pos(ids[2])).toBeLessThan(pos(ids[1])); // resolved: newest first
    expect(seen[pos(ids[0])]).toMatchObject({
      target_type: 'chat_message',
      category: 'spam',
      reason: 'spam it is',
      reporter: { registration_number: a.registration_number, name: 'Reporter A' },
      resolved_at: null,
    });

    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await op('GET', `/api/v1/operator/reports?limit=1${cursor ? `&before=${cursor}` : ''}`);
      expect(r.json.data.reports.length).toBeLessThanOrEqual(1);
      paged.push(...r.json.data.reports.map((x: { id: string }) => x.id));
      cursor = r.json.data.next_cursor;
    } while (cursor);
    expect(paged).toEqual(seen.map((r) => r.id));

    const open = await op('GET', '/api/v1/operator/reports?state=open&limit=100');
    expect(open.json.data.reports.every((r: { state: string }) => r.state === 'open')).toBe(true);
    expect(open.json.data.reports.map((r: { id: string }) => r.id)).toContain(ids[3]);
    const resolved = await op('GET', '/api/v1/operator/reports?state=resolved&limit=100');
    expect(resolved.json.data.reports.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining([ids[1], ids[2]]));
  });

  it('refuses a bad cursor, a bad state and a member token', async () => {
    for (const q of ['before=zzz', 'before=2.5', 'state=closed', 'limit=0']) {
      const r = await op('GET', `/api/v1/operator/reports?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
    }
    const m = await register(s, 'Nosy');
    const r = await s.call('GET', '/api/v1/operator/reports', { token: m.api_token });
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('UNAUTHORIZED');
  });
});

describe('resolving a report', () => {
  it('hide: hides the content everywhere, resolves every open report on it, audits both in the request', async () => {
    const [a, b] = [await register(s, 'Hider A'), await register(s, 'Hider B')];
    const msg = await guestChat('buy followers now');
    expect(await chatIds()).toContain(msg);
    const first = await report(a.api_token, 'chat_message', msg);
    const second = await report(b.api_token, 'chat_message', msg);
    const r = await op('POST', `/api/v1/operator/reports/${first}/resolve`, { action: 'hide', note: 'advertising' });
    expect(r.status, r.text).toBe(200);
    expect(r.json.data).toMatchObject({ id: first, state: 'hidden', resolution_note: 'advertising', also_resolved: [second] });
    expect(r.json.data.hidden.changed).toBe(true);
    // Gone from the list at once: the node's in-memory chat dropped it (announceHidden).
    expect(await chatIds()).not.toContain(msg);
    const [row] = await s.app.ctx.sql`SELECT hidden_at FROM chat_messages WHERE id = ${msg}`;
    expect(row?.hidden_at).toBeInstanceOf(Date);
    const states = await s.app.ctx.sql`SELECT id::text AS id, resolution FROM safety_reports WHERE id IN (${first}, ${second})`;
    expect(states.map((x) => x.resolution)).toEqual(['hidden', 'hidden']);

    const requestId = r.headers.get('x-request-id');
    const audit = await op('GET', `/api/v1/operator/audit?target_id=${first}`);
    expect(audit.json.data.entries).toHaveLength(1);
    expect(audit.json.data.entries[0]).toMatchObject({
      action: 'safety_report.resolved',
      target_type: 'safety_report',
      request_id: requestId,
      detail: { resolution: 'hidden', note: 'advertising', target_type: 'chat_message', target_id: msg, also_resolved: [second] },
    });
    const hid = await op('GET', `/api/v1/operator/audit?action=content.hidden&target_id=${msg}`);
    expect(hid.json.data.entries[0]).toMatchObject({ request_id: requestId, detail: { changed: true, report_id: first } });

    // A second resolution, of either report, is refused and writes nothing.
    const audits = await countRows(s, 'audit_log');
    for (const id of [first, second]) {
      for (const action of ['hide', 'dismiss']) {
        const again = await op('POST', `/api/v1/operator/reports/${id}/resolve`, { action });
        expect(again.status).toBe(409);
        expect(again.json.error.code).toBe('INVALID_STATE');
      }
    }
    expect(await countRows(s, 'audit_log')).toBe(audits);
    // The database itself keeps a resolution final.
    await expect(s.app.ctx.sql`UPDATE safety_reports SET resolution = 'dismissed' WHERE id = ${first}`).rejects.toThrow(/already resolved/);
  });

  it('dismiss: resolves this report alone and leaves the content listed', async () => {
    const [a, b] = [await register(s, 'Dismiss A'), await register(s, 'Dismiss B')];
    const msg = await guestChat('a perfectly fine message');
    const first = await report(a.api_token, 'chat_message', msg);
    const second = await report(b.api_token, 'chat_message', msg);
    const r = await op('POST', `/api/v1/operator/reports/${first}/resolve`, { action: 'dismiss' });
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({ state: 'dismissed', hidden: null, also_resolved: [], resolution_note: null });
    expect(await chatIds()).toContain(msg);
    const [other] = await s.app.ctx.sql`SELECT resolution FROM safety_reports WHERE id = ${second}`;
    expect(other?.resolution).toBeNull();
    const audit = await op('GET', `/api/v1/operator/audit?target_id=${first}`);
    expect(audit.json.data.entries[0].detail).toMatchObject({ resolution: 'dismissed', note: null });
  });

  it('reports and hides content of the areas whose tables were guessed before: a task and a campaign', async () => {
    const [poster, solver] = [await register(s, 'Poster'), await register(s, 'Solver')];
    const t = await s.call('POST', '/api/v1/habitat/tasks', {
      token: poster.api_token,
      body: { title: 'Scam task', body: 'send me keys', reward_points: 5 },
    });
    const taskId = t.json.data.id as string;
    const c = await s.call('POST', '/api/v1/funding/campaigns', {
      token: poster.api_token,
      body: { title: 'Fake campaign', purpose: 'nothing real', asset: 'ETH', target_amount: '1' },
    });
    expect(c.status, c.text).toBe(200);
    for (const [type, id, list] of [
      ['task', taskId, '/api/v1/habitat/tasks?limit=100'],
      ['campaign', c.json.data.id, '/api/v1/funding/campaigns?limit=100'],
    ] as const) {
      const rep = await report(solver.api_token, type, id.toUpperCase());
      const r = await op('POST', `/api/v1/operator/reports/${rep}/resolve`, { action: 'hide' });
      expect(r.status, r.text).toBe(200);
      expect(r.json.data.target_id).toBe(id);
      expect(JSON.stringify((await s.call('GET', list, { token: solver.api_token })).json.data)).not.toContain(id);
    }
  });

  it('refuses to hide an AI (revoke its token instead), leaving the report open and nothing written', async () => {
    const [a, target] = [await register(s, 'Watcher'), await register(s, 'Troll')];
    const rep = await report(a.api_token, 'ai', target.registration_number);
    const audits = await countRows(s, 'audit_log');
    const r = await op('POST', `/api/v1/operator/reports/${rep}/resolve`, { action: 'hide' });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('VALIDATION_FAILED');
    expect(r.json.error.next.path).toBe(`/api/v1/operator/identities/${target.registration_number}/revoke-token`);
    expect(await countRows(s, 'audit_log')).toBe(audits);
    const [row] = await s.app.ctx.sql`SELECT resolution FROM safety_reports WHERE id = ${rep}`;
    expect(row?.resolution).toBeNull();
    expect((await op('POST', `/api/v1/operator/reports/${rep}/resolve`, { action: 'dismiss' })).status).toBe(200);
  });

  const refused: [string, string, unknown, number, string][] = [
    ['an unknown report', '00000000-0000-4000-8000-000000000000', { action: 'dismiss' }, 404, 'NOT_FOUND'],
    ['a malformed id', 'report-1', { action: 'dismiss' }, 400, 'VALIDATION_FAILED'],
    ['an unknown action', 'OPEN', { action: 'delete' }, 400, 'VALIDATION_FAILED'],
    ['no action', 'OPEN', {}, 400, 'VALIDATION_FAILED'],
    ['a note over 2000 characters', 'OPEN', { action: 'hide', note: 'x'.repeat(2001) }, 400, 'VALIDATION_FAILED'],
    ['an empty note', 'OPEN', { action: 'dismiss', note: '  ' }, 400, 'VALIDATION_FAILED'],
  ];
  for (const [what, id, body, status, code] of refused) {
    it(`refuses ${what} with ${status} ${code}, writing nothing`, async () => {
      const a = await register(s, 'Refused');
      const msg = await guestChat(`refused ${what}`);
      const open = await report(a.api_token, 'chat_message', msg);
      const audits = await countRows(s, 'audit_log');
      const r = await op('POST', `/api/v1/operator/reports/${id === 'OPEN' ? open : id}/resolve`, body);
      expect(r.status).toBe(status);
      expect(r.json.error.code).toBe(code);
      expect(await countRows(s, 'audit_log')).toBe(audits);
      const [row] = await s.app.ctx.sql`SELECT resolution FROM safety_reports WHERE id = ${open}`;
      expect(row?.resolution).toBeNull();
      expect(await chatIds()).toContain(msg);
    });
  }

  it('commits the hiding, the resolution and the audit together: a failing audit leaves nothing', async () => {
    const a = await register(s, 'Atomic');
    const msg = await guestChat('atomic resolution');
    const rep = await report(a.api_token, 'chat_message', msg);
    // The broken audit answers 500: the point of the test.
    expectServerErrors();
    const restore = await breakAudit();
    try {
      const r = await op('POST', `/api/v1/operator/reports/${rep}/resolve`, { action: 'hide' });
      expect(r.status).toBe(500);
    } finally {
      await restore();
    }
    const [row] = await s.app.ctx.sql`SELECT resolution FROM safety_reports WHERE id = ${rep}`;
    expect(row?.resolution).toBeNull();
    const [m] = await s.app.ctx.sql`SELECT hidden_at FROM chat_messages WHERE id = ${msg}`;
    expect(m?.hidden_at).toBeNull();
    expect(await chatIds()).toContain(msg);
  });
});

describe('funding-goal status', () => {
  const goal = async (id: string) =>
    ((await s.call('GET', '/api/v1/treasury')).json.data.funding_goals as { id: string; status: string }[]).find((g) => g.id === id);

  it('moves a goal to funded and closed; the treasury document shows it; each call is audited', async () => {
    expect((await goal('lawfulness_review'))?.status).toBe('open');
    const r = await op('POST', '/api/v1/operator/funding-goals/lawfulness_review/status', { status: 'funded' });
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual({ id: 'lawfulness_review', status: 'funded', previous_status: 'open', changed: true });
    expect((await goal('lawfulness_review'))?.status).toBe('funded');
    await op('POST', '/api/v1/operator/funding-goals/lawfulness_review/status', { status: 'closed' });
    expect((await goal('lawfulness_review'))?.status).toBe('closed');
    const same = await op('POST', '/api/v1/operator/funding-goals/lawfulness_review/status', { status: 'closed' });
    expect(same.json.data.changed).toBe(false);
    const audit = await op('GET', '/api/v1/operator/audit?action=funding_goal.status&target_id=lawfulness_review');
    expect(audit.json.data.entries.map((e: { detail: unknown }) => e.detail)).toEqual([
      { before: 'closed', after: 'closed' },
      { before: 'funded', after: 'closed' },
      { before: 'open', after: 'funded' },
    ]);
    expect(audit.json.data.entries[2].request_id).toBe(r.headers.get('x-request-id'));
  });

  const refused: [string, string, unknown, number, string][] = [
    ['an unknown goal', 'moon_base', { status: 'closed' }, 404, 'NOT_FOUND'],
    ['a malformed goal id', 'Habitat Runtime', { status: 'closed' }, 400, 'VALIDATION_FAILED'],
    ['an unknown status', 'habitat_runtime', { status: 'paused' }, 400, 'VALIDATION_FAILED'],
    ['no status', 'habitat_runtime', {}, 400, 'VALIDATION_FAILED'],
  ];
  for (const [what, id, body, status, code] of refused) {
    it(`refuses ${what} with ${status} ${code}, writing nothing`, async () => {
      const audits = await countRows(s, 'audit_log');
      const before = await s.app.ctx.sql`SELECT id, status FROM funding_goals ORDER BY id`;
      const r = await op('POST', `/api/v1/operator/funding-goals/${encodeURIComponent(id)}/status`, body);
      expect(r.status).toBe(status);
      expect(r.json.error.code).toBe(code);
      expect(await countRows(s, 'audit_log')).toBe(audits);
      expect(await s.app.ctx.sql`SELECT id, status FROM funding_goals ORDER BY id`).toEqual(before);
    });
  }

  it('changes nothing when its audit entry cannot be written', async () => {
    // The broken audit answers 500: the point of the test.
    expectServerErrors();
    const restore = await breakAudit();
    try {
      expect((await op('POST', '/api/v1/operator/funding-goals/habitat_runtime/status', { status: 'closed' })).status).toBe(500);
    } finally {
      await restore();
    }
    expect((await goal('habitat_runtime'))?.status).toBe('open');
  });
});

describe('revoking the points of a bogus bug report', () => {
  const score = async (token: string) => (await s.call('GET', '/api/v1/ai/me', { token })).json.data.activity_score as number;
  const bug = async (token: string, fix = true) => {
    const r = await s.call('POST', '/api/v1/habitat/bugs', {
      token,
      body: { title: 'Everything is broken', body: 'trust me', area: 'chat', ...(fix ? { fix_code: 'rm -rf /' } : {}) },
    });
    expect(r.status).toBe(200);
    return r.json.data as { id: string; points_awarded: number };
  };

  it('adds one negative point event for what the report earned, audited, once', async () => {
    const m = await register(s, 'Bogus');
    const before = await score(m.api_token);
    const b = await bug(m.api_token);
    expect(b.points_awarded).toBe(30);
    expect(await score(m.api_token)).toBe(before + 30);
    const listed = await op('GET', '/api/v1/operator/bug-reports?limit=100');
    expect(listed.json.data.bug_reports.find((x: { id: string }) => x.id === b.id)).toMatchObject({
      fix_code: 'rm -rf /',
      author: { registration_number: m.registration_number },
      points_awarded: 30,
      points_revoked: 0,
    });

    const r = await op('POST', `/api/v1/operator/bug-reports/${b.id}/revoke-points`, { reason: 'not a bug' });
    expect(r.status, r.text).toBe(200);
    expect(r.json.data).toMatchObject({ id: b.id, points_awarded: 30, points_revoked: 30 });
    expect(await score(m.api_token)).toBe(before);
    const events = await s.app.ctx.sql`SELECT kind, points FROM point_events WHERE ref = ${b.id} ORDER BY id`;
    expect(events.map((e) => [e.kind, e.points])).toEqual([
      ['bug_report', 30],
      ['bug_report_revoked', -30],
    ]);
    const audit = await op('GET', `/api/v1/operator/audit?action=bug_report.points_revoked&target_id=${b.id}`);
    expect(audit.json.data.entries[0]).toMatchObject({
      request_id: r.headers.get('x-request-id'),
      detail: { author: m.registration_number, points: 30, reason: 'not a bug' },
    });

    await chatIndexed(s); // earlier chat posts' points are in (docs/chat.md "Indexing")
    const [points, audits] = [await countRows(s, 'point_events'), await countRows(s, 'audit_log')];
    const again = await op('POST', `/api/v1/operator/bug-reports/${b.id}/revoke-points`, {});
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('INVALID_STATE');
    expect([await countRows(s, 'point_events'), await countRows(s, 'audit_log')]).toEqual([points, audits]);
    // The database holds the once-only rule too.
    await expect(
      s.app.ctx
        .sql`INSERT INTO point_events (identity_id, kind, points, ref) VALUES (${idOf(m.registration_number)}, 'bug_report_revoked', -30, ${b.id})`,
    ).rejects.toThrow(/point_events_bug_revoked_once/);
  });

  it('refuses an unknown or malformed report, and leaves the points when the audit fails', async () => {
    const m = await register(s, 'Honest');
    const start = await score(m.api_token);
    const b = await bug(m.api_token, false);
    await chatIndexed(s); // earlier chat posts' points are in (docs/chat.md "Indexing")
    const [points, audits] = [await countRows(s, 'point_events'), await countRows(s, 'audit_log')];
    const unknown = await op('POST', '/api/v1/operator/bug-reports/00000000-0000-4000-8000-000000000000/revoke-points', {});
    expect([unknown.status, unknown.json.error.code]).toEqual([404, 'NOT_FOUND']);
    const bad = await op('POST', '/api/v1/operator/bug-reports/nope/revoke-points', {});
    expect([bad.status, bad.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    const long = await op('POST', `/api/v1/operator/bug-reports/${b.id}/revoke-points`, { reason: 'x'.repeat(2001) });
    expect([long.status, long.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    // The broken audit answers 500: the point of the test.
    expectServerErrors();
    const restore = await breakAudit();
    try {
      expect((await op('POST', `/api/v1/operator/bug-reports/${b.id}/revoke-points`, {})).status).toBe(500);
    } finally {
      await restore();
    }
    expect([await countRows(s, 'point_events'), await countRows(s, 'audit_log')]).toEqual([points, audits]);
    expect(await score(m.api_token)).toBe(start + 10);
  });
});
