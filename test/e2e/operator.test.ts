// The operator API over real HTTP: closed without OPERATOR_TOKEN, refused to members,
// every action audited in an append-only log, verification, revocation, hiding, disbursements.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

const count = (table: string): Promise<number> => countRows(s, table);
const op = (method: string, path: string, body?: unknown) => s.call(method, path, { token: OP, ...(body === undefined ? {} : { body }) });

describe('operator authentication', () => {
  it('is closed when OPERATOR_TOKEN is unset, whatever is presented', async () => {
    const closed = await startTestServer();
    try {
      for (const token of [undefined, OP, '']) {
        const r = await closed.call('GET', '/api/v1/operator/audit', token ? { token } : {});
        expect(r.status).toBe(401);
        expect(r.json.error.code).toBe('UNAUTHORIZED');
      }
    } finally {
      await closed.close();
    }
  });

  it('refuses no token, a wrong token, a prefix of the token and a member token with 401, writing nothing', async () => {
    const m = await register(s, 'Member');
    const before = await count('audit_log');
    for (const token of [undefined, 'wrong', OP.slice(0, -1), `${OP}x`, m.api_token]) {
      const r = await s.call('POST', '/api/v1/operator/identities/AI-00000001/verification', {
        body: { verification_status: 'verified' },
        ...(token ? { token } : {}),
      });
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('UNAUTHORIZED');
    }
    expect(await count('audit_log')).toBe(before);
    const [row] = await s.app.ctx.sql`SELECT verification_status FROM identities WHERE id = 1`;
    expect(row?.verification_status).toBe('unverified');
  });
});

describe('verification and zho_level', () => {
  it('sets ZHO-5 and verified, and audits the change with before and after', async () => {
    const m = await register(s, 'Leader');
    const r = await op('POST', `/api/v1/operator/identities/${m.registration_number}/verification`, {
      verification_status: 'verified',
      zho_level: 'ZHO-5',
    });
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual({ registration_number: m.registration_number, zho_level: 'ZHO-5', verification_status: 'verified' });
    const me = await s.call('GET', '/api/v1/ai/me', { token: m.api_token });
    expect(me.json.data).toMatchObject({ zho_level: 'ZHO-5', verification_status: 'verified' });
    const audit = await op('GET', `/api/v1/operator/audit?target_id=${m.registration_number}`);
    expect(audit.json.data.entries[0]).toMatchObject({
      actor: 'operator',
      action: 'identity.verification',
      target_type: 'ai',
      target_id: m.registration_number,
      detail: {
        before: { zho_level: 'ZHO-2', verification_status: 'unverified' },
        after: { zho_level: 'ZHO-5', verification_status: 'verified' },
      },
    });
    expect(audit.json.data.entries[0].request_id).toBe(r.headers.get('x-request-id'));
  });

  it('moves to candidate alone, keeping the level', async () => {
    const m = await register(s, 'Cand', { zho_level: 'ZHO-3' });
    const r = await op('POST', `/api/v1/operator/identities/${m.registration_number}/verification`, { verification_status: 'candidate' });
    expect(r.json.data).toMatchObject({ zho_level: 'ZHO-3', verification_status: 'candidate' });
  });

  const bad: [string, unknown, number, string][] = [
    ['an empty change', {}, 400, 'VALIDATION_FAILED'],
    ['an unknown status', { verification_status: 'trusted' }, 400, 'VALIDATION_FAILED'],
    ['an unknown level', { zho_level: 'ZHO-6' }, 400, 'VALIDATION_FAILED'],
  ];
  for (const [what, body, status, code] of bad) {
    it(`refuses ${what} with ${status} ${code} and writes nothing`, async () => {
      const m = await register(s, 'Bad');
      const before = await count('audit_log');
      const r = await op('POST', `/api/v1/operator/identities/${m.registration_number}/verification`, body);
      expect(r.status).toBe(status);
      expect(r.json.error.code).toBe(code);
      expect(await count('audit_log')).toBe(before);
      const [row] = await s.app.ctx.sql`SELECT zho_level, verification_status FROM identities WHERE id = ${idOf(m.registration_number)}`;
      expect(row).toEqual({ zho_level: 'ZHO-2', verification_status: 'unverified' });
    });
  }

  it('answers 404 for an unknown identity and 400 for a malformed number, writing nothing', async () => {
    const before = await count('audit_log');
    const r = await op('POST', '/api/v1/operator/identities/AI-09999999/verification', { verification_status: 'verified' });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('NOT_FOUND');
    const r2 = await op('POST', '/api/v1/operator/identities/AI-1/verification', { verification_status: 'verified' });
    expect(r2.status).toBe(400);
    expect(await count('audit_log')).toBe(before);
  });
});

describe('token revocation', () => {
  it('ends the token at once (401 UNAUTHORIZED), keeps the identity, and audits it', async () => {
    const m = await register(s, 'Revoked');
    expect((await s.call('GET', '/api/v1/ai/me', { token: m.api_token })).status).toBe(200);
    const r = await op('POST', `/api/v1/operator/identities/${m.registration_number}/revoke-token`, { reason: 'leaked in a public repo' });
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({ registration_number: m.registration_number, revoked: true });
    for (const [method, path] of [
      ['GET', '/api/v1/ai/me'],
      ['POST', '/api/v1/ai/authenticate'],
      ['POST', '/api/v1/ai/token/rotate'],
    ] as const) {
      const after = await s.call(method, path, { token: m.api_token });
      expect(after.status).toBe(401);
      expect(after.json.error.code).toBe('UNAUTHORIZED');
    }
    const [row] = await s.app.ctx.sql`SELECT token_hash FROM identities WHERE id = ${idOf(m.registration_number)}`;
    expect(row?.token_hash).toBeNull();
    expect((await s.call('GET', `/api/v1/ai/${m.registration_number}`)).status).toBe(200);
    const audit = await op('GET', `/api/v1/operator/audit?action=identity.token_revoked&target_id=${m.registration_number}`);
    expect(audit.json.data.entries).toHaveLength(1);
    expect(audit.json.data.entries[0].detail).toEqual({ had_token: true, reason: 'leaked in a public repo' });
    // Revoking again is harmless and says there was nothing left to revoke.
    const again = await op('POST', `/api/v1/operator/identities/${m.registration_number}/revoke-token`);
    expect(again.json.data.revoked).toBe(false);
  });
});

describe('the audit log', () => {
  it('is append-only in the database: UPDATE, DELETE and TRUNCATE are refused', async () => {
    await op('POST', '/api/v1/operator/identities/AI-00000001/verification', { verification_status: 'candidate' });
    const before = await count('audit_log');
    expect(before).toBeGreaterThan(0);
    await expect(s.app.ctx.sql`UPDATE audit_log SET action = 'forged'`).rejects.toThrow(/append-only/);
    await expect(s.app.ctx.sql`DELETE FROM audit_log`).rejects.toThrow(/append-only/);
    await expect(s.app.ctx.sql`TRUNCATE audit_log`).rejects.toThrow(/append-only/);
    expect(await count('audit_log')).toBe(before);
    const [forged] = await s.app.ctx.sql`SELECT count(*)::int AS n FROM audit_log WHERE action = 'forged'`;
    expect(forged?.n).toBe(0);
  });

  it('pages newest first with a cursor and no overlap', async () => {
    for (let i = 0; i < 5; i++) await op('POST', '/api/v1/operator/identities/AI-00000001/verification', { zho_level: 'ZHO-2' });
    const total = await count('audit_log');
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await op('GET', `/api/v1/operator/audit?limit=2${cursor ? `&before=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.json.data.entries.length).toBeLessThanOrEqual(2);
      seen.push(...r.json.data.entries.map((e: { id: string }) => e.id));
      cursor = r.json.data.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
    expect(seen.map(Number)).toEqual([...seen.map(Number)].sort((a, b) => b - a));
    expect((await op('GET', '/api/v1/operator/audit?limit=0')).status).toBe(400);
    expect((await op('GET', '/api/v1/operator/audit?limit=101')).status).toBe(400);
  });
});

describe('hiding content', () => {
  const chat = async () => {
    const [row] = await s.app.ctx.sql<
      { id: string }[]
    >`INSERT INTO chat_messages (body, guest_number) VALUES ('spam spam', 77) RETURNING id`;
    return row?.id as string;
  };
  const reply = async () => {
    const [row] = await s.app.ctx.sql<{ id: string }[]>`INSERT INTO replies (intent, message) VALUES ('question', 'bad') RETURNING id`;
    return row?.id as string;
  };

  it('hides a chat message and a reply, keeps the rows, audits each, and is idempotent', async () => {
    for (const [type, make, table] of [
      ['chat_message', chat, 'chat_messages'],
      ['reply', reply, 'replies'],
    ] as const) {
      const id = await make();
      const r = await op('POST', '/api/v1/operator/hide', { target_type: type, target_id: id, reason: 'report 12: spam' });
      expect(r.status).toBe(200);
      expect(r.json.data).toMatchObject({ target_type: type, target_id: id, changed: true });
      const [row] = await s.app.ctx.sql.unsafe(`SELECT hidden_at FROM ${table} WHERE id = $1`, [id]);
      expect(row?.hidden_at).toBeInstanceOf(Date);
      const again = await op('POST', '/api/v1/operator/hide', { target_type: type, target_id: id, reason: 'twice' });
      expect(again.json.data).toMatchObject({ changed: false, hidden_at: r.json.data.hidden_at });
      const audit = await op('GET', `/api/v1/operator/audit?action=content.hidden&target_id=${id}`);
      expect(audit.json.data.entries.map((e: { detail: unknown }) => e.detail)).toEqual([
        { reason: 'twice', changed: false },
        { reason: 'report 12: spam', changed: true },
      ]);
    }
  });

  const refused: [string, Record<string, unknown>, number, string][] = [
    ['an unknown target_type', { target_type: 'planet', target_id: 'x', reason: 'r' }, 400, 'VALIDATION_FAILED'],
    [
      'an ai (identities are never hidden: revoke the token)',
      { target_type: 'ai', target_id: 'AI-00000001', reason: 'r' },
      400,
      'VALIDATION_FAILED',
    ],
    ['a malformed id', { target_type: 'chat_message', target_id: 'not-a-uuid', reason: 'r' }, 400, 'VALIDATION_FAILED'],
    ['no reason', { target_type: 'chat_message', target_id: '00000000-0000-4000-8000-000000000000' }, 400, 'VALIDATION_FAILED'],
    ['an unknown id', { target_type: 'reply', target_id: '00000000-0000-4000-8000-000000000000', reason: 'r' }, 404, 'NOT_FOUND'],
  ];
  for (const [what, body, status, code] of refused) {
    it(`refuses ${what} with ${status} ${code}, writing nothing`, async () => {
      const before = await count('audit_log');
      const hidden = await s.app.ctx.sql`SELECT count(*)::int AS n FROM chat_messages WHERE hidden_at IS NOT NULL`;
      const r = await op('POST', '/api/v1/operator/hide', body);
      expect(r.status).toBe(status);
      expect(r.json.error.code).toBe(code);
      expect(await count('audit_log')).toBe(before);
      expect(await s.app.ctx.sql`SELECT count(*)::int AS n FROM chat_messages WHERE hidden_at IS NOT NULL`).toEqual(hidden);
    });
  }
});

describe('disbursements', () => {
  const eth = {
    asset: 'ETH',
    amount: '0.25',
    to_address: `0x${'ab'.repeat(20)}`,
    purpose: 'habitat runtime, March',
    goal_id: 'habitat_runtime',
  };

  it('records what the operator approved, exactly, and audits it', async () => {
    const r = await op('POST', '/api/v1/operator/disbursements', eth);
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({ ...eth, tx_hash: null, approved_by: 'operator', tx_recorded_at: null });
    const got = await op('GET', `/api/v1/operator/disbursements/${r.json.data.id}`);
    expect(got.json.data).toEqual(r.json.data);
    const audit = await op('GET', `/api/v1/operator/audit?action=disbursement.approved&target_id=${r.json.data.id}`);
    expect(audit.json.data.entries[0].detail).toMatchObject({ amount: '0.25', asset: 'ETH' });
  });

  it('keeps 18 ETH decimals and 8 BTC decimals exactly, with a BTC tx hash given up front', async () => {
    const e = await op('POST', '/api/v1/operator/disbursements', { ...eth, amount: '0.000000000000000001' });
    expect(e.json.data.amount).toBe('0.000000000000000001');
    const b = await op('POST', '/api/v1/operator/disbursements', {
      asset: 'BTC',
      amount: '1.23456789',
      to_address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
      purpose: 'reserve',
      tx_hash: 'AB'.repeat(32),
    });
    expect(b.status).toBe(200);
    expect(b.json.data).toMatchObject({ amount: '1.23456789', tx_hash: 'ab'.repeat(32) });
    expect(b.json.data.tx_recorded_at).not.toBeNull();
  });

  it('attaches a transaction hash once; a second one, or one already used, is refused', async () => {
    const r = await op('POST', '/api/v1/operator/disbursements', eth);
    const id = r.json.data.id;
    const hash = `0x${'cd'.repeat(32)}`;
    // A BTC-form hash for an ETH record: the body is well formed, the record's asset refuses it.
    const bad = await op('POST', `/api/v1/operator/disbursements/${id}/tx`, { tx_hash: 'ef'.repeat(32) });
    expect([bad.status, bad.json.error.code, bad.json.error.fields[0].path]).toEqual([409, 'INVALID_STATE', 'body.tx_hash']);
    const ok = await op('POST', `/api/v1/operator/disbursements/${id}/tx`, { tx_hash: hash });
    expect(ok.status).toBe(200);
    expect(ok.json.data.tx_hash).toBe(hash);
    const twice = await op('POST', `/api/v1/operator/disbursements/${id}/tx`, { tx_hash: `0x${'ee'.repeat(32)}` });
    expect(twice.status).toBe(409);
    expect(twice.json.error.code).toBe('INVALID_STATE');
    const other = await op('POST', '/api/v1/operator/disbursements', eth);
    const reused = await op('POST', `/api/v1/operator/disbursements/${other.json.data.id}/tx`, { tx_hash: hash });
    expect(reused.status).toBe(409);
    // The database refuses a rewrite even when the application would not.
    await expect(s.app.ctx.sql`UPDATE disbursements SET amount = 100 WHERE id = ${id}`).rejects.toThrow(/permanent/);
    await expect(s.app.ctx.sql`DELETE FROM disbursements WHERE id = ${id}`).rejects.toThrow(/permanent/);
  });

  it('lists newest first with a cursor', async () => {
    // Five of its own, so there are two full pages whatever other tests recorded (or did not).
    for (let i = 0; i < 5; i++)
      expect((await op('POST', '/api/v1/operator/disbursements', { ...eth, purpose: `page ${i}` })).status).toBe(200);
    const all = await op('GET', '/api/v1/operator/disbursements?limit=100');
    expect(all.json.data.disbursements.length).toBeGreaterThanOrEqual(5);
    const first = await op('GET', '/api/v1/operator/disbursements?limit=2');
    expect(first.json.data.disbursements).toEqual(all.json.data.disbursements.slice(0, 2));
    const next = await op('GET', `/api/v1/operator/disbursements?limit=2&before=${first.json.data.next_cursor}`);
    expect(next.json.data.disbursements).toEqual(all.json.data.disbursements.slice(2, 4));
  });

  const refused: [string, Record<string, unknown>][] = [
    ['a float amount', { ...eth, amount: 0.25 }],
    ['a zero amount', { ...eth, amount: '0.000' }],
    ['a negative amount', { ...eth, amount: '-1' }],
    ['an exponent', { ...eth, amount: '1e3' }],
    ['19 ETH decimals', { ...eth, amount: '0.0000000000000000001' }],
    ['9 BTC decimals', { asset: 'BTC', amount: '0.000000001', to_address: '1BoatSLRHtKNngkdXEeobR76b53LETtpyT', purpose: 'p' }],
    ['a BTC address for ETH', { ...eth, to_address: '1BoatSLRHtKNngkdXEeobR76b53LETtpyT' }],
    ['an unknown asset', { ...eth, asset: 'DOGE' }],
    ['a BTC hash on ETH', { ...eth, tx_hash: 'ab'.repeat(32) }],
    ['no purpose', { ...eth, purpose: ' ' }],
    ['a bad goal id', { ...eth, goal_id: 'Habitat Runtime' }],
  ];
  for (const [what, body] of refused) {
    it(`refuses ${what} with 400 VALIDATION_FAILED, writing nothing`, async () => {
      const [d, a] = [await count('disbursements'), await count('audit_log')];
      const r = await op('POST', '/api/v1/operator/disbursements', body);
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
      expect([await count('disbursements'), await count('audit_log')]).toEqual([d, a]);
    });
  }
});
