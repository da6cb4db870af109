// Member-token checks of writes are read from the database, grouped (src/domain/identity.ts
// resolveMemberToken): concurrent writers' checks share one query, each writer gets the identity
// its own token names (or 401), and a check asked while a query is in flight waits for the next
// one, so a token rotated meanwhile is refused (DECISIONS.md: the old token stops working at once).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/domain/tokens.js';
import { replaceTokenHash } from '../../src/store/identities.js';
import { register, startTestServer, type TestServer } from '../helpers/server.js';
import { watchStatements, watchSubmits } from '../helpers/statements.js';
import { waitFor } from '../helpers/wait.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const GROUPED = 'token_hash = ANY(';

/** The grouped check's real statement (test/helpers/statements.ts). */
const watch = () => watchStatements(s.app.ctx.sql, GROUPED);

const heartbeat = (token: string) => s.call('POST', '/api/v1/habitat/heartbeat', { token, body: {} });

describe('grouped token checks', () => {
  it('concurrent writers share a few queries, and each is answered as the member its own token names', async () => {
    const members = await Promise.all(Array.from({ length: 8 }, (_, i) => register(s, `Checker${i}`)));
    for (const m of members) expect((await heartbeat(m.api_token)).status).toBe(200); // now residents
    const w = watch();
    try {
      const wave = Array.from({ length: 40 }, (_, i) =>
        i % 10 === 9 ? 'cmn_not-a-token-anyone-holds-0123456789' : (members[i % 8]?.api_token as string),
      );
      const answers = await Promise.all(wave.map(heartbeat));
      answers.forEach((r, i) => {
        if (i % 10 === 9) {
          expect(r.status).toBe(401);
          expect(r.json.error.code).toBe('UNAUTHORIZED');
        } else {
          expect(r.status, r.text).toBe(200);
          expect(r.json.data.registration_number).toBe(members[i % 8]?.registration_number);
        }
      });
      // One query per writer without grouping (40); grouped, 2 in every run seen here (the first
      // writer's query, then everyone who came while it was in flight), bounded loosely for load.
      expect(w.count()).toBeGreaterThanOrEqual(1);
      expect(w.count()).toBeLessThanOrEqual(wave.length / 4);
    } finally {
      w.restore();
    }
  });

  it('a check asked while a query is in flight is read by the next: a token rotated meanwhile is refused', async () => {
    const m = await register(s, 'Rotated');
    expect((await heartbeat(m.api_token)).status).toBe(200);
    const w = watch();
    const asked = watchSubmits(s.app.ctx, 'tokenChecks');
    try {
      const release = w.holdNext();
      const first = heartbeat(m.api_token);
      // The first check's query has read the token; its answer is held on its way back.
      await waitFor(() => w.answered() === 1, 5000, 'the first check read');
      // The token changes (as another node's rotation would; by SQL: a rotation through the API
      // would itself wait for a token check, which this test holds), then a second write asks.
      await replaceTokenHash(s.app.ctx.sql, Number(m.registration_number.slice(3)), hashToken('cmn_the-new-token-0123456789abcdef'));
      const second = heartbeat(m.api_token);
      // The second check is queued while the first query is in flight (an event, not a pause).
      await waitFor(() => asked.count() === 2, 5000, 'the second check asked');
      expect(w.count()).toBe(1); // the second did not join the query in flight
      release();
      expect((await first).status).toBe(200); // asked before the change
      const late = await second;
      expect(late.status).toBe(401);
      expect(late.json.error.code).toBe('UNAUTHORIZED');
      expect(w.count()).toBe(2);
    } finally {
      w.restore();
      asked.restore();
    }
  });
});
