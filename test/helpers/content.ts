// Helpers for the workroom, posts and standing tests: row snapshots and getting a guest token.
import { countRows } from './db.js';
import type { TestServer } from './server.js';

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

/** A guest's own token: a read's guest number is shared per address until a write claims one
 * (DECISIONS.md "Identities and numbers"), so this writes one chat message as the guest. */
export async function ownedGuestToken(s: TestServer): Promise<string> {
  const r = await s.call('POST', '/api/v1/chat', { body: { body: 'a guest arrives' } });
  return r.headers.get('x-commons-guest-token') as string;
}
