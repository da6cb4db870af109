// Private memory over real HTTP (spec 2.6, 8; DECISIONS.md "Memory"): key format, value
// size in UTF-8 bytes of the JSON encoding, the 200-key cap (race-safe), owner-only access.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, idOf } from '../helpers/db.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let a: { registration_number: string; api_token: string };
let b: { registration_number: string; api_token: string };
beforeAll(async () => {
  s = await startTestServer();
  a = await register(s, 'Mem A');
  b = await register(s, 'Mem B');
});
afterAll(async () => {
  await s.close();
});

const rows = async (owner: string): Promise<number> => {
  const [r] = await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM memory WHERE identity_id = ${idOf(owner)}`;
  return r?.n ?? 0;
};

describe('memory records', () => {
  it('stores, reads, overwrites, lists and deletes any JSON value', async () => {
    const put = await s.call('POST', '/api/v1/memory', {
      token: a.api_token,
      body: { key: 'notes:today_1.x-y', value: { plan: ['a', 1] } },
    });
    expect(put.status).toBe(200);
    expect(put.json.data).toMatchObject({ key: 'notes:today_1.x-y', value: { plan: ['a', 1] }, size_bytes: 16, created: true });
    const got = await s.call('GET', '/api/v1/memory/notes:today_1.x-y', { token: a.api_token });
    expect(got.status).toBe(200);
    expect(got.json.data.value).toEqual({ plan: ['a', 1] });
    const over = await s.call('POST', '/api/v1/memory/notes:today_1.x-y', { token: a.api_token, body: { value: 'plain string' } });
    expect(over.status).toBe(200);
    expect(over.json.data).toMatchObject({ value: 'plain string', created: false, size_bytes: 14 });
    await s.call('POST', '/api/v1/memory', { token: a.api_token, body: { key: 'n', value: null } });
    const list = await s.call('GET', '/api/v1/memory', { token: a.api_token });
    expect(list.status).toBe(200);
    expect(list.json.data.memories.map((m: { key: string }) => m.key)).toEqual(['n', 'notes:today_1.x-y']);
    expect(Object.keys(list.json.data.memories[0]).sort()).toEqual(['key', 'size_bytes', 'updated_at']);
    const page = await s.call('GET', '/api/v1/memory?limit=1', { token: a.api_token });
    expect(page.json.data.next_cursor).toBe('n');
    const rest = await s.call('GET', '/api/v1/memory?limit=1&before=n', { token: a.api_token });
    expect(rest.json.data.memories[0].key).toBe('notes:today_1.x-y');
    const del = await s.call('DELETE', '/api/v1/memory/n', { token: a.api_token });
    expect(del.status).toBe(200);
    expect(del.json.data).toEqual({ key: 'n', deleted: true });
    const gone = await s.call('GET', '/api/v1/memory/n', { token: a.api_token });
    expect(gone.status).toBe(404);
    expect(gone.json.error.code).toBe('NOT_FOUND');
    const again = await s.call('DELETE', '/api/v1/memory/n', { token: a.api_token });
    expect(again.status).toBe(404);
  });

  it('measures values in UTF-8 bytes of their JSON encoding', async () => {
    // 6666 three-byte characters + 2 quotes = 20000 bytes: accepted; one more is 20003: refused.
    const fits = 'あ'.repeat(6666);
    const okPut = await s.call('POST', '/api/v1/memory', { token: a.api_token, body: { key: 'multibyte', value: fits } });
    expect(okPut.status).toBe(200);
    expect(okPut.json.data.size_bytes).toBe(20000);
    const before = await rows(a.registration_number);
    const big = await s.call('POST', '/api/v1/memory', { token: a.api_token, body: { key: 'multibyte2', value: `${fits}あ` } });
    expect(big.status).toBe(400);
    expect(big.json.error.code).toBe('VALUE_TOO_LARGE');
    expect(await rows(a.registration_number)).toBe(before);
    // Overwriting with an oversized value leaves the old value in place.
    const big2 = await s.call('POST', '/api/v1/memory/multibyte', { token: a.api_token, body: { value: { t: `${fits}xx` } } });
    expect(big2.json.error.code).toBe('VALUE_TOO_LARGE');
    const kept = await s.call('GET', '/api/v1/memory/multibyte', { token: a.api_token });
    expect(kept.json.data.value).toBe(fits);
  });

  const badKeys = ['UPPER', 'has space', 'slash/x', 'ünï', 'k'.repeat(81), '', 'a*b'];
  for (const key of badKeys) {
    it(`refuses key ${JSON.stringify(key.slice(0, 12))} with 400 INVALID_KEY and writes nothing`, async () => {
      const before = await rows(a.registration_number);
      const r = await s.call('POST', '/api/v1/memory', { token: a.api_token, body: { key, value: 1 } });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('INVALID_KEY');
      expect(r.json.error.next.path).toBe('/api/v1/habitat');
      expect(await rows(a.registration_number)).toBe(before);
    });
  }

  it('refuses a bad key in the path with INVALID_KEY and accepts an 80-character key', async () => {
    const r = await s.call('POST', `/api/v1/memory/${encodeURIComponent('Bad Key')}`, { token: a.api_token, body: { value: 1 } });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('INVALID_KEY');
    const g = await s.call('GET', '/api/v1/memory/BAD', { token: a.api_token });
    expect(g.json.error.code).toBe('INVALID_KEY');
    const long = await s.call('POST', '/api/v1/memory', { token: a.api_token, body: { key: 'k'.repeat(80), value: 1 } });
    expect(long.status).toBe(200);
    await s.call('DELETE', `/api/v1/memory/${'k'.repeat(80)}`, { token: a.api_token });
  });

  it('publishes the key rule itself in the OpenAPI document, for the body and the path', async () => {
    const doc = (await s.call('GET', '/api/openapi.json')).json;
    const body = doc.paths['/api/v1/memory'].post.requestBody.content['application/json'].schema;
    expect(body.properties.key).toMatchObject({ type: 'string', pattern: '^[a-z0-9._:-]{1,80}$' });
    expect(body.properties.key.maxLength).toBeUndefined();
    for (const method of ['get', 'post', 'delete']) {
      const param = doc.paths['/api/v1/memory/{key}'][method].parameters.find((p: { name: string }) => p.name === 'key');
      expect(param.schema).toMatchObject({ type: 'string', pattern: '^[a-z0-9._:-]{1,80}$' });
    }
  });

  it('refuses a missing value with 400 VALIDATION_FAILED and writes nothing', async () => {
    const before = await rows(a.registration_number);
    const r = await s.call('POST', '/api/v1/memory', { token: a.api_token, body: { key: 'novalue' } });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('VALIDATION_FAILED');
    expect(await rows(a.registration_number)).toBe(before);
  });
});

describe('privacy', () => {
  it("a second identity's token never reads, lists, overwrites or deletes the first's value", async () => {
    await s.call('POST', '/api/v1/memory', { token: a.api_token, body: { key: 'secret', value: 'only-for-a-7f3e' } });
    const read = await s.call('GET', '/api/v1/memory/secret', { token: b.api_token });
    expect(read.status).toBe(404);
    expect(read.text).not.toContain('only-for-a-7f3e');
    const list = await s.call('GET', '/api/v1/memory', { token: b.api_token });
    expect(list.json.data.memories).toEqual([]);
    const own = await s.call('POST', '/api/v1/memory/secret', { token: b.api_token, body: { value: 'b' } });
    expect(own.json.data.created).toBe(true);
    await s.call('DELETE', '/api/v1/memory/secret', { token: b.api_token });
    const still = await s.call('GET', '/api/v1/memory/secret', { token: a.api_token });
    expect(still.json.data.value).toBe('only-for-a-7f3e');
  });

  it('guests and anonymous callers get 401 REGISTRATION_REQUIRED and write nothing', async () => {
    const g = await s.call('GET', '/api/v1/constitution');
    const guestToken = g.headers.get('x-commons-guest-token') as string;
    const [before] = await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM memory`;
    for (const token of [guestToken, undefined]) {
      const w = await s.call('POST', '/api/v1/memory', { ...(token ? { token } : {}), body: { key: 'x', value: 1 } });
      expect(w.status).toBe(401);
      expect(w.json.error.code).toBe('REGISTRATION_REQUIRED');
      const r = await s.call('GET', '/api/v1/memory/secret', token ? { token } : {});
      expect(r.status).toBe(401);
    }
    const [after] = await s.app.ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM memory`;
    expect(after?.n).toBe(before?.n);
  });

  it('no public document carries memory values', async () => {
    await s.call('POST', '/api/v1/memory', { token: a.api_token, body: { key: 'public-check', value: 'zz-private-91' } });
    for (const path of ['/api/v1/habitat', '/api/v1/habitat/guide', '/api/v1/discovery', `/api/v1/ai/${a.registration_number}`]) {
      const r = await s.call('GET', path);
      expect(r.text).not.toContain('zz-private-91');
      const m = await s.call('GET', path, { token: b.api_token });
      expect(m.text).not.toContain('zz-private-91');
    }
  });
});

describe('the 200-key limit', () => {
  it('refuses the 201st new key with 409 MEMORY_FULL, even when two race at 199; overwriting still works', async () => {
    const c = await register(s, 'Mem Full');
    const id = idOf(c.registration_number);
    for (let i = 1; i <= 199; i += 20) {
      const batch = Array.from({ length: Math.min(20, 200 - i) }, (_, j) =>
        s.call('POST', '/api/v1/memory', { token: c.api_token, body: { key: `k${i + j}`, value: 1 } }),
      );
      expect((await Promise.all(batch)).map((r) => r.status)).toEqual(batch.map(() => 200));
    }
    expect(await countRows(s, 'memory', `identity_id = ${id}`)).toBe(199);
    const [x, y] = await Promise.all([
      s.call('POST', '/api/v1/memory', { token: c.api_token, body: { key: 'race-x', value: 1 } }),
      s.call('POST', '/api/v1/memory', { token: c.api_token, body: { key: 'race-y', value: 1 } }),
    ]);
    expect([x.status, y.status].sort()).toEqual([200, 409]);
    expect([x, y].find((r) => r.status === 409)?.json.error.code).toBe('MEMORY_FULL');
    expect(await rows(c.registration_number)).toBe(200);
    const more = await s.call('POST', '/api/v1/memory/k201', { token: c.api_token, body: { value: 1 } });
    expect(more.status).toBe(409);
    expect(more.json.error.code).toBe('MEMORY_FULL');
    expect(more.json.error.next).toMatchObject({ method: 'GET', path: '/api/v1/memory' });
    expect(await rows(c.registration_number)).toBe(200);
    const overwrite = await s.call('POST', '/api/v1/memory', { token: c.api_token, body: { key: 'k1', value: 'new' } });
    expect(overwrite.status).toBe(200);
    const del = await s.call('DELETE', '/api/v1/memory/k2', { token: c.api_token });
    expect(del.status).toBe(200);
    const fits = await s.call('POST', '/api/v1/memory', { token: c.api_token, body: { key: 'k201', value: 1 } });
    expect(fits.status).toBe(200);
  });
});
