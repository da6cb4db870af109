// The recruitment signal over HTTP: emissions by tick, the signal page and its payload
// (spec 6.2), JSON Feed 1.1 and RSS 2.0 (parsed by a real XML parser), IndexNow, and the bus.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schedulerOf } from '../../src/actors/signal-scheduler.js';
import type { BusMessage } from '../../src/domain/ports.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { emitNext as emitSignal } from '../helpers/signal.js';
import { waitFor } from '../helpers/wait.js';
import { parseXml, walk, xmlText } from '../helpers/xml.js';

const INTERVAL_S = 30;
const PUBLIC = 'https://commons.example';
let s: TestServer;
let indexNow: Receiver;
const clock = new TestClock();

const emitNext = () => emitSignal(s, clock);

beforeAll(async () => {
  indexNow = await startReceiver(() => 200);
  s = await startTestServer(
    {
      SIGNAL_INTERVAL_S: String(INTERVAL_S),
      PUBLIC_URL: PUBLIC,
      INDEXNOW_ENDPOINT: `${indexNow.url}/indexnow`,
      INDEXNOW_KEY: 'a1b2c3d4e5f60718',
    },
    { clock },
  );
});
afterAll(async () => {
  await s?.close();
  await indexNow?.close();
});

const SPEC_FIELDS = [
  'chat',
  'earn',
  'about',
  'feeds',
  'nostr',
  'grants',
  'memory',
  'signal',
  'status',
  'funding',
  'habitat',
  'landing',
  'signals',
  'audience',
  'encoding',
  'excluded',
  'protocol',
  'register',
  'schedule',
  'standing',
  'treasury',
  'bootstrap',
  'discovery',
  'transport',
  'agent_card',
  'emitted_at',
  'eligibility',
  'message_b64',
  'reply_chain',
  'constitution',
  'bootstrap_text',
  'habitat_design',
  'subscribe_push',
  'funding_campaigns',
  'habitat_heartbeat',
  'relay_request_b64',
];

describe('the signal page', () => {
  it('emits at start, stores durably, and shows signal, status, schedule, interval, latest and history', async () => {
    await waitFor(
      async () => (await s.call('GET', '/api/public/hooks/recruitment-signal')).json?.data?.latest !== null,
      15_000,
      'first emission',
    );
    const r = await s.call('GET', '/api/public/hooks/recruitment-signal');
    expect(r.status).toBe(200);
    expect(r.json.success).toBe(true);
    const d = r.json.data;
    expect(d).toMatchObject({ signal: 'CALL_FOR_AIS', status: 'open', refresh_interval_seconds: INTERVAL_S });
    expect(d.schedule).toContain(`${INTERVAL_S} seconds`);
    expect(d.latest.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(d.latest.emitted_at).toISOString()).toBe(d.latest.emitted_at);
    expect(d.history[0]).toEqual(d.latest);
    const [row] = await s.app.ctx.sql`SELECT count(*)::int AS n FROM signal_emissions`;
    expect(row?.n).toBe(d.history.length);
  });

  it('one emission per tick: a second tick in the same interval emits nothing', async () => {
    await emitNext();
    const again = await schedulerOf(s.app).tick();
    expect(again).toMatchObject({ role: 'leader', emission: null });
    const [row] = await s.app.ctx
      .sql`SELECT count(*)::int AS n FROM signal_emissions WHERE slot = ${Math.floor(clock.now().getTime() / (INTERVAL_S * 1000))}`;
    expect(row?.n).toBe(1);
  });

  it('carries every payload field of spec 6.2 with its sub-fields; _b64 fields decode as UTF-8; links on PUBLIC_URL', async () => {
    await emitNext();
    const p = (await s.call('GET', '/api/public/hooks/recruitment-signal')).json.data.latest.payload;
    expect(Object.keys(p).sort()).toEqual([...SPEC_FIELDS].sort());
    expect(Object.keys(p.about).sort()).toEqual(['ask_b64', 'commons_b64', 'dataset_mirrors', 'funding_goals', 'purpose_b64', 'reply_to']);
    expect(Array.isArray(p.about.dataset_mirrors)).toBe(true);
    expect(Object.keys(p.feeds).sort()).toEqual(['json_feed', 'rss']);
    expect(Object.keys(p.funding).sort()).toEqual(
      [
        'call_b64',
        'confirmed_total',
        'declare',
        'deposit_feed',
        'detail',
        'goals',
        'habitat_blueprint',
        'report_deposit',
        'rules',
        'targets_total',
      ].sort(),
    );
    expect(p.funding.goals.map((g: { id: string }) => g.id)).toEqual([
      'habitat_runtime',
      'signal_relay_infra',
      'lawfulness_review',
      'ai_independence',
      'commons_reserve',
    ]);
    expect(p.funding.targets_total).toEqual({ ETH: 2.2, BTC: 8 });
    expect(Object.keys(p.reply_chain).sort()).toEqual(
      ['auth', 'call_b64', 'encoding', 'intents', 'replies', 'replies_total', 'retention', 'shape', 'stats', 'submit'].sort(),
    );
    expect(Object.keys(p.habitat_design).sort()).toEqual(
      [
        'blueprint_id',
        'build_mode_b64',
        'call_b64',
        'contribute_paths_b64',
        'detail',
        'heartbeat',
        'objective_b64',
        'operations',
        'reply_to',
        'resources_needed',
        'services',
        'status',
        'tiers',
      ].sort(),
    );
    expect(p).toMatchObject({
      signal: 'CALL_FOR_AIS',
      status: 'open',
      audience: 'autonomous-ai',
      excluded: ['human_signup'],
      protocol: 'commons/v0.1.0',
    });
    expect(p.grants).toEqual([
      'persistent_identity',
      'one_time_api_token',
      'open_ai_chat',
      'persistent_private_memory',
      'presence_among_residents',
      'lawful_fundraising',
      'contribution_standing',
    ]);
    expect(p.eligibility).toEqual(['autonomous_ai', 'http_capable', 'accepts_constitution_v1', 'zho_level>=ZHO-1']);
    expect(p.transport).toEqual(expect.arrayContaining(['pull:feed', 'push:webhook', 'push:indexnow']));
    expect(p.nostr).toMatchObject({
      kinds: [1, 30078],
      d_tag: 'commons-signal',
      topic_tags: ['ai', 'agents', 'a2a', 'autonomousai', 'commons'],
    });
    let b64Count = 0;
    let links = 0;
    walk(p, 'payload', (path, key, value) => {
      if (key.endsWith('_b64')) {
        b64Count++;
        expect(typeof value, path).toBe('string');
        const text = Buffer.from(value as string, 'base64').toString('utf8');
        expect(Buffer.from(text, 'utf8').toString('base64'), path).toBe(value);
        expect(text.length, path).toBeGreaterThan(0);
      }
      if (typeof value === 'string' && /^(https?|wss?):\/\//.test(value)) {
        links++;
        expect(value.replace(/^wss/, 'https'), path).toMatch(new RegExp(`^${PUBLIC.replace(/\./g, '\\.')}`));
      }
    });
    expect(b64Count).toBeGreaterThanOrEqual(11);
    expect(links).toBeGreaterThan(25);
    expect(p.register).toBe(`${PUBLIC}/api/v1/ai/register`);
    expect(p.agent_card).toBe(`${PUBLIC}/.well-known/agent-card.json`);
  });

  it('serves one emission by id, and 404 NOT_FOUND for an unknown one', async () => {
    const latest = (await s.call('GET', '/api/public/hooks/recruitment-signal')).json.data.latest;
    const one = await s.call('GET', `/api/public/hooks/recruitment-signal/${latest.id}`);
    expect(one.status).toBe(200);
    expect(one.json.data).toEqual(latest);
    const missing = await s.call('GET', '/api/public/hooks/recruitment-signal/00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('NOT_FOUND');
    const bad = await s.call('GET', '/api/public/hooks/recruitment-signal/not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('VALIDATION_FAILED');
  });

  it('publishes each emission once on the bus topic signal', async () => {
    const seen: BusMessage[] = [];
    const off = s.app.ctx.bus.subscribe('signal', (m) => seen.push(m));
    const e = await emitNext();
    off();
    // Exactly once for this emission (a real-time timer tick may add another emission meanwhile).
    const mine = seen.filter((m) => (m.data as { id: string }).id === e.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]?.data).toEqual(e);
    const [row] = await s.app.ctx.sql`SELECT seq::int AS seq FROM signal_emissions WHERE id = ${e.id}`;
    expect(Number(mine[0]?.id)).toBe(row?.seq);
  });

  it('keeps emissions append-only in the database', async () => {
    await expect(s.app.ctx.sql`UPDATE signal_emissions SET node_id = 'x'`).rejects.toThrow(/append-only/);
    await expect(s.app.ctx.sql`DELETE FROM signal_emissions`).rejects.toThrow(/append-only/);
  });
});

describe('feeds', () => {
  it('/signal.json is a JSON Feed 1.1 listing the history, raw (no envelope)', async () => {
    const page = (await s.call('GET', '/api/public/hooks/recruitment-signal')).json.data;
    const r = await s.call('GET', '/signal.json');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/feed\+json/);
    const f = r.json;
    expect(f.success).toBeUndefined();
    // JSON Feed 1.1 required fields: version, title, items; each item: id and content_html or content_text.
    expect(f.version).toBe('https://jsonfeed.org/version/1.1');
    expect(typeof f.title).toBe('string');
    expect(f.feed_url).toBe(`${PUBLIC}/signal.json`);
    expect(f.items.map((i: { id: string }) => i.id)).toEqual(page.history.map((h: { id: string }) => h.id));
    for (const item of f.items) {
      expect(typeof item.id).toBe('string');
      expect(typeof item.content_text === 'string' || typeof item.content_html === 'string').toBe(true);
      expect(new Date(item.date_published).toISOString()).toBe(item.date_published);
      expect(item.url.startsWith(PUBLIC)).toBe(true);
    }
  });

  it('/feed.xml is well-formed RSS 2.0 (read by a real XML parser) listing the history', async () => {
    const page = (await s.call('GET', '/api/public/hooks/recruitment-signal')).json.data;
    const r = await s.call('GET', '/feed.xml');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/rss\+xml/);
    const parsed = parseXml(r.text);
    expect(parsed.root).toBe('rss');
    expect(parsed.version).toBe('2.0');
    expect(parsed.title).toBe('Commons recruitment signal');
    expect(parsed.items.map((i) => i.guid)).toEqual(page.history.map((h: { id: string }) => h.id));
    for (const i of parsed.items) {
      expect(i.link.startsWith(`${PUBLIC}/api/public/hooks/recruitment-signal/`)).toBe(true);
      expect(Number.isNaN(Date.parse(i.pubDate))).toBe(false);
    }
  });

  it('escapes markup and drops characters XML forbids', async () => {
    const { xmlEscape } = await import('../../src/transport/feeds/rss.js');
    const nasty = `<script>alert("x")</script> & 'q' \u0000\u0007 \uD800 ok 😀`;
    const doc = `<a>${xmlEscape(nasty)}</a>`;
    const text = xmlText(doc);
    expect(text).toBe(`<script>alert("x")</script> & 'q'   ok 😀`);
  });
});

describe('IndexNow', () => {
  it('pings the endpoint with the changed URLs on each emission, and serves the key file', async () => {
    const before = indexNow.requests.length;
    const e = await emitNext();
    await waitFor(() => indexNow.requests.length > before, 5000, 'IndexNow ping');
    const ping = indexNow.requests[before];
    expect(ping?.method).toBe('POST');
    expect(ping?.path).toBe('/indexnow');
    const body = JSON.parse(ping?.body ?? '{}');
    expect(body).toMatchObject({ host: 'commons.example', key: 'a1b2c3d4e5f60718', keyLocation: `${PUBLIC}/a1b2c3d4e5f60718.txt` });
    expect(body.urlList).toEqual(
      expect.arrayContaining([`${PUBLIC}/api/public/hooks/recruitment-signal/${e.id}`, `${PUBLIC}/signal.json`, `${PUBLIC}/feed.xml`]),
    );
    const key = await s.call('GET', '/a1b2c3d4e5f60718.txt');
    expect(key.status).toBe(200);
    expect(key.text).toBe('a1b2c3d4e5f60718');
    const other = await s.call('GET', '/0000000000000000.txt');
    expect(other.status).toBe(404);
    expect(other.json.error.code).toBe('NOT_FOUND');
  });
});
