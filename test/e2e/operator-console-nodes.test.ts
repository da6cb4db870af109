// Console sessions live in the database (docs/operations.md "The operator's console"): a session
// opened on one node holds on another and a sign-out ends it on both at once; a restart with a new
// OPERATOR_TOKEN ends every session (each remembers a fingerprint of the token it was opened with).
import { describe, expect, it } from 'vitest';
import { getPage, postForm, signIn } from '../helpers/console.js';
import { countRows } from '../helpers/db.js';
import { SharedStore, twoNodes } from '../helpers/nodes.js';
import { OPERATOR_TOKEN, operatorEnv } from '../helpers/operator.js';
import { usingRealPostgres } from '../helpers/server.js';

const ROTATED = 'rotated-operator-token-0123456789abcdef';

describe('sessions across restarts', () => {
  it('ends every session when OPERATOR_TOKEN changes', async () => {
    const shared = new SharedStore(operatorEnv());
    try {
      const first = await shared.start();
      const { cookie } = await signIn(first);
      const again = await shared.restart(first);
      expect((await getPage(again, '/operator/audit', cookie)).status).toBe(200);
      const rotated = await shared.restart(again, { OPERATOR_TOKEN: ROTATED });
      expect((await getPage(rotated, '/operator/audit', cookie)).status).toBe(401);
      expect((await postForm(rotated, '/operator/sign-in', { token: OPERATOR_TOKEN })).status).toBe(401);
      const fresh = await signIn(rotated, ROTATED);
      expect((await getPage(rotated, '/operator/audit', fresh.cookie)).status).toBe(200);
    } finally {
      await shared.close();
    }
  }, 120_000);
});

describe.runIf(usingRealPostgres())('sessions on two nodes (real PostgreSQL)', () => {
  it('holds on the other node, and a sign-out on one ends it on both at once', async () => {
    const two = await twoNodes(operatorEnv());
    try {
      const { cookie, csrf } = await signIn(two.a);
      expect((await getPage(two.b, '/operator/audit', cookie)).status).toBe(200);
      expect((await postForm(two.a, '/operator/sign-out', { csrf }, { cookie })).status).toBe(303);
      expect((await getPage(two.b, '/operator/audit', cookie)).status).toBe(401);
      expect(await countRows(two.b, 'operator_sessions')).toBe(0);
    } finally {
      await two.close();
    }
  }, 120_000);
});
