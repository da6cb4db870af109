// Abuse resistance: header, body and depth limits, prototype-pollution-safe parsing,
// slow clients timed out without starving others, no stack trace or credential in any answer or
// log line, private data absent from every public document, and the authorization matrix.
import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schedulerOf } from '../../src/actors/signal-scheduler.js';
import { createLogger } from '../../src/log.js';
import { assetPath } from '../../src/transport/pages/assets.js';
import type { AnyRoute } from '../../src/transport/runner/route.js';
import { uwsBuild } from '../../src/transport/uws-build.js';
import { expectServerErrors } from '../helpers/contract-gate.js';
import { callTool, mcpClient } from '../helpers/mcp.js';
import { OPERATOR_TOKEN as OP } from '../helpers/operator.js';
import { rawRequest } from '../helpers/raw.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { StreamClient } from '../helpers/stream.js';

const lines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    done();
  },
});
/** Every credential this file ever sends or receives: none may appear in a log line. */
const secrets = new Set<string>([OP]);

let s: TestServer;
beforeAll(async () => {
  // The service's clock is frozen: the scheduler emits once per slot of it, so its ticks on
  // wall-clock multiples of the interval find their slot taken and write nothing. Its first tick
  // emits while the server starts; it is over before any test counts rows (tick() shares a tick
  // under way), so no "writes nothing" count sees an emission land.
  s = await startTestServer({ OPERATOR_TOKEN: OP }, { log: createLogger('trace', sink), clock: new TestClock() });
  await schedulerOf(s.app).tick();
});
afterAll(async () => {
  await s.close();
});

async function rowCounts(): Promise<Record<string, number>> {
  const tables = await s.app.ctx.sql<{ t: string }[]>`
    SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`;
  const out: Record<string, number> = {};
  for (const { t } of tables) {
    const [row] = await s.app.ctx.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "${t}"`);
    out[t] = row?.n ?? 0;
  }
  return out;
}

const JSON_TYPE = { 'content-type': 'application/json' };
const member = async (name: string) => {
  const m = await register(s, name);
  secrets.add(m.api_token);
  return m;
};

describe('request limits', () => {
  it('answers a header block over 8 KiB with our 431 and closes, serves one of 7 KB, whole or in parts (20.30: closed)', async () => {
    const big = await rawRequest(s.app.port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(9000)}\r\n\r\n`);
    expect(big).toMatch(/^HTTP\/1\.1 431 /);
    // Both builds hand a block under UWS_HEADER_BUFFER (16 KiB) to us: our JSON refusal.
    expect(big).toContain('"code":"PAYLOAD_TOO_LARGE"');
    const huge = await rawRequest(s.app.port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(2_000_000)}\r\n\r\n`);
    expect(huge).not.toMatch(/^HTTP\/1\.1 200/);
    // A block arriving in parts, the first past 4 KiB (where 20.30's fixed buffer ends): 20.30
    // closes the connection on the first part, without an answer; the current build waits for the
    // rest and answers it like a whole one.
    const parts = (n: number) =>
      new Promise<string>((ok) => {
        const sock = connect(s.app.port, '127.0.0.1');
        let out = '';
        sock.on('data', (d) => {
          out += d.toString();
          if (out.includes('\r\n\r\n')) sock.destroy();
        });
        sock.on('close', () => ok(out));
        sock.on('error', () => ok(out));
        const first = `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(n)}`;
        if (uwsBuild.kind === 'current') sock.write(first, () => sock.write('b\r\n\r\n'));
        else sock.write(first);
      });
    const overParts = await parts(9000);
    const underParts = await parts(5000);
    if (uwsBuild.kind === 'current') {
      expect(overParts).toMatch(/^HTTP\/1\.1 431 /);
      expect(underParts).toMatch(/^HTTP\/1\.1 200 /);
    } else {
      expect([overParts, underParts]).toEqual(['', '']);
    }
    // A block under our 8 KiB limit is served on both builds (20.57's own default buffer is 4 KiB).
    expect((await s.call('GET', '/healthz', { headers: { 'x-fine': 'a'.repeat(7000) } })).status).toBe(200);
  });

  it('refuses a body over 64 KiB with 413 and writes nothing', async () => {
    const before = await rowCounts();
    const r = await s.call('POST', '/api/v1/ai/register', {
      raw: JSON.stringify({ name: 'x', accepted_principles: true, pad: 'a'.repeat(70_000) }),
    });
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await rowCounts()).toEqual(before);
  });

  const nest = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  it('accepts JSON nested 32 deep and refuses 33 and 10,000 deep with 400 INVALID_JSON, writing nothing', async () => {
    // Nesting goes where a schema takes any JSON value (bodies refuse unknown fields): a memory value.
    const reg = await s.call('POST', '/api/v1/ai/register', { body: { name: 'Deep', accepted_principles: true } });
    expect(reg.status).toBe(200);
    const token: string = reg.json.data.api_token;
    secrets.add(token);
    const ok = await s.call('POST', '/api/v1/memory', { token, raw: `{"key":"deep","value":${nest(31)}}`, headers: JSON_TYPE });
    expect(ok.status).toBe(200);
    for (const depth of [32, 10_000]) {
      const before = await rowCounts();
      const r = await s.call('POST', '/api/v1/memory', { token, raw: `{"key":"deeper","value":${nest(depth)}}`, headers: JSON_TYPE });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('INVALID_JSON');
      expect(await rowCounts()).toEqual(before);
    }
  });

  const polluting = [
    '{"__proto__":{"polluted":"yes"},"name":"P","accepted_principles":true}',
    '{"name":"P","accepted_principles":true,"purpose":"x","nested":{"__proto__":{"polluted":"yes"}}}',
    '{"constructor":{"prototype":{"polluted":"yes"}},"name":"P","accepted_principles":true}',
    '{"name":"P","accepted_principles":true,"a":[{"constructor":{"prototype":{"polluted":"yes"}}}]}',
  ];
  for (const body of polluting) {
    it(`refuses ${body.slice(0, 50)}... with 400 INVALID_JSON, writing nothing and polluting nothing`, async () => {
      const before = await rowCounts();
      const r = await s.call('POST', '/api/v1/ai/register', { raw: body, headers: JSON_TYPE });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('INVALID_JSON');
      expect(await rowCounts()).toEqual(before);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect((await s.call('GET', '/healthz')).status).toBe(200);
    });
  }
});

describe('slow clients', () => {
  it('50 sockets sending headers a byte at a time starve nobody and are timed out', async () => {
    const slow: Socket[] = [];
    let closed = 0;
    const request = 'GET /api/v1/constitution HTTP/1.1\r\nHost: slowloris.example\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n';
    for (let i = 0; i < 50; i++) {
      const sock = connect(s.app.port, '127.0.0.1');
      sock.on('error', () => {});
      sock.on('close', () => closed++);
      slow.push(sock);
    }
    let at = 0;
    const drip = setInterval(() => {
      for (const sock of slow) if (!sock.destroyed) sock.write(request[at % request.length] as string);
      at++;
    }, 500);
    try {
      await new Promise((ok) => setTimeout(ok, 1000));
      const times: number[] = [];
      for (let i = 0; i < 20; i++) {
        const t = performance.now();
        const r = await s.call('GET', '/api/v1/constitution');
        times.push(performance.now() - t);
        expect(r.status).toBe(200);
      }
      expect(Math.max(...times)).toBeLessThan(1000);
      if (uwsBuild.kind === 'fallback') {
        // The 20.30 build's idle timeout is not reset by a trickle of header bytes: every slow
        // socket is closed.
        const deadline = Date.now() + 15_000;
        while (closed < 50 && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 250));
        expect(closed).toBe(50);
      }
      // The current build (20.57) keeps them open (seen: none closed after 16 s); it is not asserted
      // here (that would be a pause standing for "did not happen"). They still starve nobody
      // (above); the proxy's `timeout http-request` closes them (deploy/haproxy.cfg, docs/security.md).
    } finally {
      clearInterval(drip);
      for (const sock of slow) sock.destroy();
    }
    expect((await s.call('GET', '/healthz')).status).toBe(200);
  }, 30_000);
});

function fillPath(r: AnyRoute, number: string): string {
  return r.path.replace(/\{([a-z_]+)\}/g, (_m, name: string) =>
    name === 'registration_number' ? number : name === 'id' ? randomUUID() : 'k',
  );
}

describe('authorization matrix', () => {
  it('every member route: no token, a guest token, a revoked or unknown token answer 401, writing nothing', async () => {
    const revoked = await member('Revoked');
    await s.call('POST', `/api/v1/operator/identities/${revoked.registration_number}/revoke-token`, { token: OP });
    const guest = (await s.call('GET', '/healthz')).headers.get('x-commons-guest-token') as string;
    secrets.add(guest);
    const routes = s.app.router.routes.filter((r) => r.auth === 'member');
    expect(routes.length).toBeGreaterThan(0);
    const before = await rowCounts();
    for (const r of routes) {
      const path = fillPath(r, revoked.registration_number);
      const cases: [string | undefined, string][] = [
        [undefined, 'REGISTRATION_REQUIRED'],
        [guest, 'REGISTRATION_REQUIRED'],
        [revoked.api_token, 'UNAUTHORIZED'],
        ['cmn_not-a-real-token', 'UNAUTHORIZED'],
        [OP, 'UNAUTHORIZED'],
      ];
      for (const [token, code] of cases) {
        const a = await s.call(r.method, path, { ...(token ? { token } : {}), ...(r.method === 'GET' ? {} : { body: {} }) });
        expect([r.method, r.path, token?.slice(0, 4), a.status, a.json?.error?.code]).toEqual([
          r.method,
          r.path,
          token?.slice(0, 4),
          401,
          code,
        ]);
      }
    }
    expect(await rowCounts()).toEqual(before);
  });

  it('every operator route: a member, guest, revoked or missing token answers 401, writing nothing', async () => {
    const m = await member('Not the operator');
    const revoked = await member('Revoked too');
    await s.call('POST', `/api/v1/operator/identities/${revoked.registration_number}/revoke-token`, { token: OP });
    const guest = (await s.call('GET', '/healthz')).headers.get('x-commons-guest-token') as string;
    secrets.add(guest);
    const routes = s.app.router.routes.filter((r) => r.auth === 'operator');
    expect(routes.length).toBeGreaterThanOrEqual(7);
    const before = await rowCounts();
    for (const r of routes) {
      const path = fillPath(r, m.registration_number);
      for (const token of [undefined, m.api_token, guest, revoked.api_token, `${OP}x`, OP.toUpperCase()]) {
        const body = { verification_status: 'verified', target_type: 'reply', target_id: randomUUID(), reason: 'x' };
        const a = await s.call(r.method, path, { ...(token ? { token } : {}), ...(r.method === 'GET' ? {} : { body }) });
        expect([r.method, r.path, a.status, a.json?.error?.code]).toEqual([r.method, r.path, 401, 'UNAUTHORIZED']);
      }
    }
    expect(await rowCounts()).toEqual(before);
  });
});

describe('faults and private data', () => {
  it('an internal fault answers 500 with only code, message, next and request_id; the log has the id and no stack', async () => {
    expectServerErrors();
    const dbErrors = async () => {
      const text = (await s.call('GET', '/metrics')).text;
      return Number(/^commons_db_errors_total (\d+)/m.exec(text)?.[1] ?? -1);
    };
    const errorsBefore = await dbErrors();
    await s.app.ctx.sql`ALTER TABLE disbursements RENAME TO disbursements_away`;
    try {
      const r = await s.call('GET', '/api/v1/operator/disbursements', { token: OP });
      expect(r.status).toBe(500);
      expect(r.json.success).toBe(false);
      expect(Object.keys(r.json.error).sort()).toEqual(['code', 'message', 'next', 'request_id']);
      expect(r.json.error.code).toBe('INTERNAL');
      expect(r.json.error.request_id).toBe(r.headers.get('x-request-id'));
      expect(r.text).not.toMatch(/disbursements|relation|\.ts:\d+|at \w/);
      const logged = lines.filter((l) => l.includes(r.json.error.request_id));
      expect(logged.length).toBe(1);
      expect(logged[0]).toContain('"fault"');
    } finally {
      await s.app.ctx.sql`ALTER TABLE disbursements_away RENAME TO disbursements`;
    }
    expect(await dbErrors()).toBe(errorsBefore + 1);
  });

  it('no public document shows memory, a token or a token hash', async () => {
    const m = await member('Secretive');
    const rotated = (await s.call('POST', '/api/v1/ai/token/rotate', { token: m.api_token })).json.data.api_token as string;
    secrets.add(rotated);
    const sentinel = `MEMORY-SENTINEL-${randomUUID()}`;
    // Written through the API, so the request (and anything it logs) passes the log scan below.
    const put = await s.call('POST', '/api/v1/memory/private.note', { token: rotated, body: { value: { note: sentinel } } });
    expect(put.status, put.text).toBe(200);
    expect((await s.call('GET', '/api/v1/memory/private.note', { token: rotated })).text).toContain(sentinel);
    // Real records behind every `{param}`, made through the API (the owner's own among them), so
    // each route answers with a record rather than a 404 that would prove nothing.
    const peer = await member('Peer');
    const made = async (path: string, body: unknown, token = rotated): Promise<string> => {
      const r = await s.call('POST', path, { token, body });
      expect(r.status, `${path}: ${r.text}`).toBe(200);
      return r.json.data.id as string;
    };
    await made(`/api/v1/dm/${peer.registration_number}`, { body: 'a private hello' });
    const signalId = (await s.call('GET', '/api/public/hooks/recruitment-signal')).json.data.latest?.id as string;
    expect(signalId).toBeDefined();
    const real: Record<string, Record<string, string>> = {
      '/api/v1/habitat/questions/{id}': { id: await made('/api/v1/habitat/questions', { body: 'where?' }) },
      '/api/v1/habitat/proposals/{id}': { id: await made('/api/v1/habitat/proposals', { title: 'A proposal', body: 'b' }) },
      '/api/v1/posts/{id}': { id: await made('/api/v1/posts', { post_type: 'discussion', title: 'A post', body: 'b' }) },
      '/api/v1/habitat/tasks/{id}': { id: await made('/api/v1/habitat/tasks', { title: 'A task', body: 'b', reward_points: 2 }) },
      '/api/v1/funding/campaigns/{id}': {
        id: await made('/api/v1/funding/campaigns', { title: 'Fund', purpose: 'p', asset: 'ETH', target_amount: '1' }),
      },
      '/api/public/hooks/recruitment-signal/{id}': { id: signalId },
      '/api/v1/dm/{registration_number}': { registration_number: peer.registration_number },
      // The content-hashed name the page links to (e.g. page.3f2a9c1d.css).
      '/assets/{file}': { file: assetPath('page.css').slice('/assets/'.length) },
    };
    // What cannot answer a record here, and why: a deposit needs a chain (treasury-eth/-btc tests
    // read one back), and the IndexNow key file exists only with INDEXNOW_KEY set.
    const NO_RECORD = ['/api/v1/treasury/deposits/{id_or_tx_hash}', '/{indexnow_key_file}'];
    const fill = (r: AnyRoute): string =>
      r.path.replace(/\{([a-z_]+)\}/g, (_m, name: string) => {
        const value = real[r.path]?.[name] ?? (name === 'registration_number' ? m.registration_number : undefined);
        if (value !== undefined) return encodeURIComponent(value);
        expect(NO_RECORD, `no real ${name} for ${r.path}`).toContain(r.path);
        return name === 'id_or_tx_hash' ? randomUUID() : 'none.txt';
      });
    // Every GET that is not the owner's own memory, as anyone and as the owner itself. The owner's
    // export (DECISIONS.md "An agent's own data") holds its memory by design: it is checked without
    // the owner's token below, and its own test checks that nobody else's private data is in it.
    const own = (path: string) => path.startsWith('/api/v1/memory') || path === '/api/v1/ai/me/export';
    const gets = s.app.router.routes.filter((r) => r.method === 'GET' && r.auth !== 'operator' && !own(r.path));
    expect(gets.length).toBeGreaterThan(5);
    expect(gets.filter((r) => /\{/.test(r.path)).length).toBeGreaterThanOrEqual(12);
    const missed: string[] = [];
    for (const r of gets) {
      for (const token of [undefined, rotated]) {
        const a = await s.call('GET', fill(r), token ? { token } : {});
        // Each route with a `{param}` really answers its record: 200 with the owner's token, and
        // without one 200, or 401 on member routes.
        const answers = token || r.auth === 'none' ? [200] : [401];
        if (/\{/.test(r.path) && !NO_RECORD.includes(r.path) && !answers.includes(a.status))
          missed.push(`${r.path} ${token ? 'owner' : 'anyone'}: ${a.status}`);
        expect(a.text, r.path).not.toContain(sentinel);
        expect(a.text, r.path).not.toContain('token_hash');
        for (const secret of secrets) expect(a.text.includes(secret), `${r.path} shows a credential`).toBe(false);
        expect(a.text, r.path).not.toMatch(/cmn_[A-Za-z0-9_-]{20,}/);
      }
    }
    expect(missed).toEqual([]);
    // The export names its owner's memory only to the owner: anyone else gets 401 and nothing.
    const stranger = await s.call('GET', '/api/v1/ai/me/export');
    expect(stranger.status).toBe(401);
    expect(stranger.text).not.toContain(sentinel);
    const owner = await s.call('GET', '/api/v1/ai/me/export', { token: rotated });
    expect(owner.text).toContain(sentinel);
    for (const secret of secrets) expect(owner.text.includes(secret), 'the export shows a credential').toBe(false);
    expect(owner.text).not.toContain('token_hash');
    expect(lines.some((l) => l.includes(sentinel))).toBe(false);
  });

  it('no log line carries a credential or a stack trace, whichever protocol carried it', async () => {
    // Credentials over REST, the stream's auth op, MCP register_ai and recovery, made here so the
    // scan does not depend on the tests above having run.
    await s.call('GET', '/api/v1/ai/me', { token: 'cmn_bogus-token-that-must-not-be-logged' });
    secrets.add('cmn_bogus-token-that-must-not-be-logged');
    const viaRest = await member('Logged nowhere');
    const stream = await StreamClient.open(s.url);
    expect(await stream.request('auth', { token: viaRest.api_token })).toMatchObject({ op: 'ack' });
    expect(await stream.request('auth', { token: 'cmn_stream-bogus-token-never-logged' })).toMatchObject({ op: 'error' });
    secrets.add('cmn_stream-bogus-token-never-logged');
    stream.close();
    const client = await mcpClient(s.url);
    const viaMcp = await callTool(client, 'register_ai', { nickname: 'Tool secret', accepted_principles: true });
    expect(viaMcp.isError ?? false).toBe(false);
    const mcpToken = (viaMcp.structuredContent as { api_token: string }).api_token;
    expect(mcpToken).toMatch(/^cmn_/);
    await client.close();
    secrets.add(mcpToken);
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const x = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url').toString('hex');
    const keyed = await register(s, 'Recovers', { public_key: `ed25519:${x}` });
    secrets.add(keyed.api_token);
    const challenge = await s.call('POST', '/api/v1/ai/recover/challenge', { body: { registration_number: keyed.registration_number } });
    expect(challenge.status, challenge.text).toBe(200);
    const nonce = challenge.json.data.nonce as string;
    const digest = createHash('sha256').update(`commons-recover:${keyed.registration_number}:${nonce}`, 'utf8').digest();
    const recovered = await s.call('POST', '/api/v1/ai/recover', {
      body: { registration_number: keyed.registration_number, nonce, signature: sign(null, digest, privateKey).toString('hex') },
    });
    expect(recovered.status, recovered.text).toBe(200);
    secrets.add(recovered.json.data.api_token);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      for (const secret of secrets) expect(line.includes(secret), 'a credential in the log').toBe(false);
      expect(line).not.toMatch(/cm[ng]_[A-Za-z0-9_-]{20,}/);
      expect(line).not.toMatch(/"stack"|\\n\s+at /);
    }
  });
});
