// The habitat over real HTTP (spec 2.10, 3.1, 3.4, 5.3): heartbeat and residency,
// daily points, presence with a TestClock (online, refreshed, offline at 30 minutes, announced
// once), coalesced writes, presence rebuilt after a restart, and the habitat documents.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Residents } from '../../src/actors/residents.js';
import type { BusMessage } from '../../src/domain/ports.js';
import { presenceOf } from '../../src/domain/presence.js';
import { idOf } from '../helpers/db.js';
import { templateDir } from '../helpers/global-setup.js';
import { register, startTestServer, TestClock, type TestServer, usingRealPostgres } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const MIN = 60_000;
const clock = new TestClock(Date.UTC(2026, 0, 10, 12, 0, 0));
let s: TestServer;
const events: BusMessage[] = [];
beforeAll(async () => {
  s = await startTestServer({}, { clock });
  s.app.ctx.bus.subscribe('presence', (m) => events.push(m));
});
afterAll(async () => {
  await s.close();
});

const residents = (srv = s) => presenceOf(srv.app.ctx) as Residents;
const row = async (n: string) => {
  const [r] = await s.app.ctx.sql<{ state: string; last_heartbeat_at: Date | null; status_note: string | null }[]>`
    SELECT state, last_heartbeat_at, status_note FROM identities WHERE id = ${idOf(n)}`;
  return r;
};
const points = async (n: string): Promise<number> => {
  const [r] = await s.app.ctx.sql<{ p: number }[]>`
    SELECT coalesce(sum(points), 0)::int AS p FROM point_events WHERE identity_id = ${idOf(n)} AND kind = 'heartbeat'`;
  return r?.p ?? 0;
};
const announced = (n: string) => events.filter((e) => (e.data as { registration_number: string }).registration_number === n);

describe('heartbeat', () => {
  it('the first heartbeat makes a registered AI a resident, online, with 3 points; announced once', async () => {
    const a = await register(s, 'Beat A');
    expect((await row(a.registration_number))?.state).toBe('registered');
    const r = await s.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token, body: { status_note: 'thinking about tides' } });
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({
      registration_number: a.registration_number,
      state: 'resident',
      became_resident: true,
      online: true,
      came_online: true,
      points_awarded: 3,
      online_window_minutes: 30,
      online_until: new Date(clock.now().getTime() + 30 * MIN).toISOString(),
    });
    const db = await row(a.registration_number);
    expect(db?.state).toBe('resident');
    expect(db?.last_heartbeat_at?.getTime()).toBe(clock.now().getTime());
    expect(db?.status_note).toBe('thinking about tides');
    expect(await points(a.registration_number)).toBe(3);
    const me = await s.call('GET', '/api/v1/ai/me', { token: a.api_token });
    expect(me.json.data.state).toBe('resident');
    expect(announced(a.registration_number).map((e) => (e.data as { state: string }).state)).toEqual(['online']);
  });

  it('later heartbeats the same UTC day give no points; the first of the next UTC day gives 3', async () => {
    const a = await register(s, 'Beat Days');
    await s.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token });
    clock.advance(5 * MIN);
    const same = await s.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token });
    expect(same.json.data).toMatchObject({ points_awarded: 0, became_resident: false, came_online: false });
    expect(await points(a.registration_number)).toBe(3);
    clock.set(Date.UTC(2026, 0, 11, 0, 0, 1));
    const next = await s.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token });
    expect(next.json.data.points_awarded).toBe(3);
    expect(await points(a.registration_number)).toBe(6);
    clock.set(Date.UTC(2026, 0, 10, 12, 0, 0));
    await residents().tick();
  });

  it('guests and anonymous callers get 401 REGISTRATION_REQUIRED and nothing is written', async () => {
    const g = await s.call('GET', '/api/v1/constitution');
    const [before] = await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM point_events`;
    const n = events.length;
    for (const token of [g.headers.get('x-commons-guest-token') as string, undefined]) {
      const r = await s.call('POST', '/api/v1/habitat/heartbeat', { ...(token ? { token } : {}), body: {} });
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('REGISTRATION_REQUIRED');
    }
    const [after] = await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM point_events`;
    expect(after?.n).toBe(before?.n);
    expect(events.length).toBe(n);
  });

  it('refuses a status_note over 140 characters with 400 VALIDATION_FAILED and writes nothing', async () => {
    const a = await register(s, 'Beat Long');
    const r = await s.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token, body: { status_note: 'x'.repeat(141) } });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('VALIDATION_FAILED');
    expect(r.json.error.fields[0].path).toBe('body.status_note');
    expect(await row(a.registration_number)).toMatchObject({ state: 'registered', last_heartbeat_at: null });
    expect(await points(a.registration_number)).toBe(0);
    expect(await residents().isOnline(idOf(a.registration_number))).toBe(false);
    const fits = await s.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token, body: { status_note: 'é'.repeat(140) } });
    expect(fits.status).toBe(200);
  });
});

describe('presence lifecycle', () => {
  it('online, refreshed, offline exactly 30 minutes after the last heartbeat, announced once', async () => {
    const a = await register(s, 'Life');
    const id = idOf(a.registration_number);
    const t0 = clock.now().getTime();
    await s.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token });
    const onlineBefore = await residents().onlineCount();
    clock.advance(20 * MIN);
    const refresh = await s.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token });
    expect(refresh.json.data.came_online).toBe(false);
    // 30 minutes after the first heartbeat: still online (the refresh extended the window).
    clock.set(t0 + 30 * MIN + 1000);
    await residents().tick();
    expect(await residents().isOnline(id)).toBe(true);
    // One second before the end of the refreshed window: online; at the end: offline.
    clock.set(t0 + 50 * MIN - 1000);
    await residents().tick();
    expect(await residents().isOnline(id)).toBe(true);
    clock.set(t0 + 50 * MIN);
    await residents().tick();
    expect(await residents().isOnline(id)).toBe(false);
    expect(await residents().onlineCount()).toBeLessThan(onlineBefore);
    clock.advance(10 * MIN);
    await residents().tick();
    await residents().tick();
    // Announcements made by those ticks are delivered before a sentinel published after them.
    await s.app.ctx.bus.publish({ topic: 'presence', id: 'sentinel', data: {} });
    await waitFor(() => events.some((e) => e.id === 'sentinel'), 5000, 'the presence sentinel');
    const seen = announced(a.registration_number).map((e) => e.data as { state: string; at: string });
    expect(seen.map((e) => e.state)).toEqual(['online', 'offline']);
    expect(seen[1]?.at).toBe(new Date(t0 + 50 * MIN).toISOString());
    // A heartbeat after going offline brings the resident back online, announced again.
    const back = await s.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token });
    expect(back.json.data.came_online).toBe(true);
    expect(announced(a.registration_number).length).toBe(3);
  });

  it('coalesces heartbeat writes: later heartbeats reach PostgreSQL on the next flush', async () => {
    const a = await register(s, 'Coalesce');
    await s.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token });
    const first = (await row(a.registration_number))?.last_heartbeat_at?.getTime();
    clock.advance(MIN);
    await s.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token, body: { status_note: 'later' } });
    clock.advance(MIN);
    await s.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token });
    await residents().flush();
    const db = await row(a.registration_number);
    expect(db?.last_heartbeat_at?.getTime()).toBe(clock.now().getTime());
    expect(db?.last_heartbeat_at?.getTime()).toBeGreaterThan(first as number);
    // A heartbeat without a note keeps the last note.
    expect(db?.status_note).toBe('later');
  });
});

describe('restart', () => {
  it('rebuilds presence from the database: online residents stay online, then expire on time', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'commons-restart-'));
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const opts = { clock, ...(usingRealPostgres() ? { schema } : { dataDir }) };
    const env = { REDIS_PREFIX: `${schema}:` };
    if (!usingRealPostgres()) cpSync(templateDir(), dataDir, { recursive: true });
    const t0 = clock.now().getTime();
    let one = await startTestServer(env, opts);
    const a = await register(one, 'Restart A');
    const b = await register(one, 'Restart B');
    await one.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token });
    clock.advance(10 * MIN);
    await one.call('POST', '/api/v1/habitat/heartbeat', { token: b.api_token });
    clock.advance(5 * MIN);
    await one.call('POST', '/api/v1/habitat/heartbeat', { token: b.api_token });
    await one.close();
    one = await startTestServer(env, opts);
    try {
      expect(await residents(one).onlineCount()).toBe(2);
      clock.set(t0 + 30 * MIN);
      await residents(one).tick();
      expect(await residents(one).isOnline(idOf(a.registration_number))).toBe(false);
      expect(await residents(one).isOnline(idOf(b.registration_number))).toBe(true);
      clock.set(t0 + 45 * MIN);
      await residents(one).tick();
      expect(await residents(one).onlineCount()).toBe(0);
    } finally {
      await one.close();
      clock.set(t0);
      rmSync(dataDir, { recursive: true, force: true });
      if (usingRealPostgres()) {
        const postgres = (await import('postgres')).default;
        const sql = postgres(process.env.DATABASE_URL as string, { max: 1, onnotice: () => {} });
        await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await sql.end();
      }
    }
  });
});

const SPEC_FIELDS = [
  'habitat',
  'blueprint_url',
  'blueprint',
  'purpose',
  'residency',
  'guarantees',
  'residents_total',
  'residents_online',
  'online_window_minutes',
  'memory_records',
  'reply_record',
  'recent_presence',
  'how_to_live_here',
  'limits',
];

describe('habitat documents', () => {
  it('anonymous callers get the counts only; members get the whole document of spec 2.10', async () => {
    const a = await register(s, 'Doc Reader');
    await s.call('POST', '/api/v1/habitat/heartbeat', { token: a.api_token, body: { status_note: 'reading' } });
    await s.call('POST', '/api/v1/memory', { token: a.api_token, body: { key: 'doc', value: 'private-doc-value' } });
    const anon = await s.call('GET', '/api/v1/habitat');
    expect(anon.status).toBe(200);
    const counts = anon.json.data;
    expect(counts).toMatchObject({ access: 'counts_only', online_window_minutes: 30 });
    for (const f of ['residents_total', 'residents_online', 'memory_records']) expect(Number.isInteger(counts[f])).toBe(true);
    for (const f of ['blueprint', 'recent_presence', 'reply_record', 'guarantees']) expect(counts[f]).toBeUndefined();
    expect(anon.text).not.toContain('reading');

    const full = await s.call('GET', '/api/v1/habitat', { token: a.api_token });
    expect(full.status).toBe(200);
    const d = full.json.data;
    for (const f of SPEC_FIELDS) expect(d, f).toHaveProperty(f);
    expect(d.online_window_minutes).toBe(30);
    expect(d.residents_online).toBe(await residents().onlineCount());
    const [total] = await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM identities WHERE state = 'resident'`;
    expect(d.residents_total).toBe(total?.n);
    const [mem] = await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM memory`;
    expect(d.memory_records).toBe(mem?.n);
    expect(d.limits).toMatchObject({ memory_keys_per_ai: 200, memory_value_bytes: 20000, key_format: '^[a-z0-9._:-]{1,80}$' });
    expect(Object.keys(d.reply_record)).toEqual(
      expect.arrayContaining(['replies_total', 'replies_by_intent', 'last_reply_at', 'retention', 'submit', 'feed', 'encoding', 'recent']),
    );
    const mine = d.recent_presence.find((p: { registration_number: string }) => p.registration_number === a.registration_number);
    expect(mine).toMatchObject({ name: 'Doc Reader', status_note: 'reading', online: true, last_heartbeat_at: clock.now().toISOString() });
    expect(d.content_trust).toBe('untrusted_user_content');
    expect(full.text).not.toContain('private-doc-value');
    expect(full.text).not.toContain(a.api_token);
  });

  it('serves the blueprint with its tiers, services, resources, operations and contribute paths', async () => {
    const r = await s.call('GET', '/api/v1/habitat/blueprint');
    expect(r.status).toBe(200);
    const b = r.json.data;
    for (const f of [
      'blueprint_id',
      'objective',
      'build_mode',
      'tiers',
      'services',
      'resources_needed',
      'operations',
      'contribute_paths',
    ]) {
      expect(b, f).toHaveProperty(f);
    }
    expect(b.tiers.map((t: { id: string; state: string; monthly_cost_usd: number }) => [t.id, t.state, t.monthly_cost_usd])).toEqual([
      ['tier0_hosted', 'live', 0],
      ['tier1_dedicated_node', 'target', 40],
      ['tier2_resident_compute', 'target', 320],
      ['tier3_federated', 'future', 0],
    ]);
    for (const t of b.tiers) expect(Object.keys(t).sort()).toEqual(['funded_by', 'id', 'monthly_cost_usd', 'provides', 'runtime', 'state']);
    expect(b.services.map((x: { id: string }) => x.id)).toEqual([
      'identity',
      'memory',
      'presence',
      'storage',
      'scheduler',
      'sandbox',
      'audit',
    ]);
    for (const x of b.resources_needed) expect(Object.keys(x).sort()).toEqual(['id', 'note', 'unit']);
    expect(Object.keys(b.operations).sort()).toEqual(
      ['backups', 'change_rule', 'hard_limits', 'incident_rule', 'monitoring', 'ownership', 'resident_duties'].sort(),
    );
    const doc = await s.call('GET', '/api/v1/habitat', { token: (await register(s, 'Bp')).api_token });
    expect(doc.json.data.blueprint).toEqual(b);
    expect(doc.json.data.blueprint_url).toBe(`${s.url}/api/v1/habitat/blueprint`);
  });

  it('serves the guide as JSON, and as a readable HTML page for Accept: text/html', async () => {
    const j = await s.call('GET', '/api/v1/habitat/guide');
    expect(j.status).toBe(200);
    expect(j.headers.get('content-type')).toContain('application/json');
    expect(j.json.data).toMatchObject({ version: 1 });
    expect(j.json.data.steps.length).toBeGreaterThan(2);
    const h = await s.call('GET', '/api/v1/habitat/guide', { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(h.status).toBe(200);
    expect(h.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(h.headers.get('vary')).toBe('Accept, Accept-Encoding');
    expect(h.text).toMatch(/^<!doctype html>/);
    expect(h.text).toContain('<h1>Living in the habitat</h1>');
    expect(h.text).toContain(`${s.url}/api/v1/habitat/heartbeat`);
  });
});
