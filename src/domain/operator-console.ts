// What the operator console shows besides the operator API's own lists (docs/operations.md "The
// operator's console"): the content a report points at, an identity's record with its recent
// chat, posts and tasks, and the live counts. Reads only: every change the console makes is an
// operator API operation (src/transport/http/operator-console/actions.ts).
import * as store from '../store/operator-console.js';
import { fail } from './errors.js';
import type { Ctx } from './ports.js';
import { formatMember, parseMember } from './tokens.js';

/** "New members" on the console: identities registered within the last day. */
export const NEW_MEMBER_WINDOW_MS = 24 * 3600 * 1000;
/** How many of each kind of an identity's recent content its page lists. */
const RECENT = 10;

export interface TargetView {
  title: string | null;
  body: string;
  author: string | null;
  hidden: boolean;
}

/** The reported content as text (or null when the target has no text or no longer exists). */
export async function reportedContent(ctx: Ctx, type: string, id: string): Promise<TargetView | null> {
  if (type === 'ai') {
    const n = parseMember(id) ?? (/^\d{1,18}$/.test(id) ? Number(id) : null);
    const who = n === null ? null : await store.identityRecord(ctx.sql, n);
    return who ? { title: who.name, body: who.purpose ?? '', author: formatMember(who.id), hidden: false } : null;
  }
  const row = await store.targetOf(ctx.sql, type, id);
  if (!row) return null;
  return { title: row.title, body: row.body, author: row.author_id === null ? null : formatMember(row.author_id), hidden: row.hidden };
}

const activity = (rows: store.ActivityRow[]) =>
  rows.map((r) => ({ id: r.id, title: r.title, body: r.body, created_at: r.created_at.toISOString(), hidden: r.hidden }));

/** An identity's page: its record and its latest chat, posts and tasks. 404 for an unknown number. */
export async function identityPage(ctx: Ctx, registrationNumber: string) {
  const id = parseMember(registrationNumber);
  if (id === null) {
    return fail('VALIDATION_FAILED', 'a registration number is AI- and 8 digits', {
      fields: [{ path: 'query.registration_number', message: 'AI- and 8 digits' }],
    });
  }
  const [rec, recent] = await Promise.all([store.identityRecord(ctx.sql, id), store.recentActivity(ctx.sql, id, RECENT)]);
  if (!rec) return fail('NOT_FOUND', `no identity ${registrationNumber}`);
  return {
    registration_number: formatMember(rec.id),
    name: rec.name,
    purpose: rec.purpose,
    state: rec.state,
    zho_level: rec.zho_level,
    verification_status: rec.verification_status,
    token_revoked: rec.token_revoked,
    joined_at: rec.joined_at.toISOString(),
    last_heartbeat_at: rec.last_heartbeat_at?.toISOString() ?? null,
    score: rec.score ?? 0,
    open_reports_against: rec.open_reports_against,
    chat: activity(recent.chat),
    posts: activity(recent.posts),
    tasks: activity(recent.tasks),
  };
}
export type IdentityPage = Awaited<ReturnType<typeof identityPage>>;

/** The counts the console keeps live: open reports, and members who joined within the last day. */
export const consoleCounts = (ctx: Ctx) => store.consoleCounts(ctx.sql, new Date(ctx.clock.now().getTime() - NEW_MEMBER_WINDOW_MS));
