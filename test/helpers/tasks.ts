// Helpers shared by the task-board tests: members, task moves over HTTP, and a fingerprint of
// everything a task move can write (to prove a refused move wrote nothing).
import { expect } from 'vitest';
import { register, type TestServer } from './server.js';

export interface Member {
  number: string;
  id: number;
  token: string;
}

export async function member(s: TestServer, name = 'Agent'): Promise<Member> {
  const r = await register(s, name);
  return { number: r.registration_number, id: Number(r.registration_number.slice(3)), token: r.api_token };
}

export async function post(s: TestServer, who: Member, reward = 10, title = 'Summarise a paper'): Promise<string> {
  const r = await s.call('POST', '/api/v1/habitat/tasks', {
    token: who.token,
    body: { title, body: 'Details of the task.', reward_points: reward },
  });
  expect(r.status, r.text).toBe(200);
  return r.json.data.id as string;
}

export const move = (s: TestServer, who: Member, id: string, action: 'claim' | 'approve' | 'cancel') =>
  s.call('POST', `/api/v1/habitat/tasks/${id}/${action}`, { token: who.token });

export const submit = (s: TestServer, who: Member, id: string, body = 'The result.') =>
  s.call('POST', `/api/v1/habitat/tasks/${id}/submissions`, { token: who.token, body: { body } });

export async function delivered(s: TestServer, poster: Member, solver: Member, reward = 10): Promise<string> {
  const id = await post(s, poster, reward);
  expect((await move(s, solver, id, 'claim')).status).toBe(200);
  expect((await submit(s, solver, id)).status).toBe(200);
  return id;
}

export async function me(s: TestServer, who: Member): Promise<{ balance: number; escrowed: number; score: number }> {
  const r = await s.call('GET', '/api/v1/ai/me', { token: who.token });
  expect(r.status).toBe(200);
  return { balance: r.json.data.credits.balance, escrowed: r.json.data.credits.escrowed, score: r.json.data.activity_score };
}

/** Row counts of every table a task move writes, and every account balance. */
export async function fingerprint(s: TestServer): Promise<string> {
  const sql = s.app.ctx.sql;
  const [counts] = await sql`
    SELECT (SELECT count(*)::int FROM tasks) AS tasks, (SELECT count(*)::int FROM task_events) AS events,
           (SELECT count(*)::int FROM task_submissions) AS submissions, (SELECT count(*)::int FROM ledger_transfers) AS transfers,
           (SELECT count(*)::int FROM ledger_accounts) AS accounts, (SELECT count(*)::int FROM point_events) AS points,
           (SELECT string_agg(id || '=' || state || '@' || version, ',' ORDER BY id) FROM tasks) AS states,
           (SELECT string_agg(id || '=' || balance, ',' ORDER BY id) FROM ledger_accounts) AS balances`;
  return JSON.stringify(counts);
}

/** sum(balances) + sum(escrow) = 1000 x members (DECISIONS.md "Tasks (credits)"). */
export async function conservation(s: TestServer): Promise<{ held: number; expected: number }> {
  const [row] = await s.app.ctx.sql<{ held: number; members: number }[]>`
    SELECT (SELECT coalesce(sum(balance), 0)::int FROM ledger_accounts WHERE kind IN ('identity', 'escrow')) AS held,
           (SELECT count(*)::int FROM identities) AS members`;
  return { held: row?.held ?? -1, expected: 1000 * (row?.members ?? 0) };
}
