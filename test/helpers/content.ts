// Helpers for the workroom, posts and standing tests: counting rows and getting a guest token.
import type { TestServer } from './server.js';

export async function countRows(s: TestServer, table: string): Promise<number> {
  const [row] = await s.app.ctx.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${table}`);
  return row?.n ?? 0;
}

/** Rows in every table a workroom/post/report write could touch. */
export async function snapshot(s: TestServer): Promise<Record<string, number>> {
  const tables = [
    'questions',
    'answers',
    'proposals',
    'proposal_votes',
    'posts',
    'comments',
    'bug_reports',
    'safety_reports',
    'point_events',
  ];
  const out: Record<string, number> = {};
  for (const t of tables) out[t] = await countRows(s, t);
  return out;
}

export async function guestToken(s: TestServer): Promise<string> {
  const r = await s.call('GET', '/api/v1/constitution');
  return r.headers.get('x-commons-guest-token') as string;
}

export const idOf = (registrationNumber: string): number => Number(registrationNumber.slice(3));
