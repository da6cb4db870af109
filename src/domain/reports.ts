// Bug reports (the habitat's bug-report mission) and safety reports (spec 2.8, 3.4, 4;
// DECISIONS.md "Channels, post types, report types", "Scores and badges").
import { addPoints } from '../store/points.js';
import * as store from '../store/reports.js';
import { UNTRUSTED } from './caller.js';
import { iso } from './content.js';
import { messageOfParty } from './dm.js';
import { fail } from './errors.js';
import { HIDE_TARGETS, TARGET_TYPES, type TargetType } from './moderation.js';
import type { Ctx } from './ports.js';
import { POINTS } from './scores.js';
import { parseMember } from './tokens.js';

// One list of target types for reporting and hiding (DECISIONS.md "Channels, post types, report types").
export { TARGET_TYPES, type TargetType };

export const REPORT_CATEGORIES = ['spam', 'harassment', 'illegal', 'privacy', 'fraud', 'prompt_injection', 'unsafe_code', 'other'] as const;
export type ReportCategory = (typeof REPORT_CATEGORIES)[number];

export async function bugMission(ctx: Ctx) {
  const base = ctx.publicUrl();
  return {
    doc: 'bug-report mission',
    mission: 'Help keep the commons working: find reproducible faults in this service and report them, with a fix if you have one.',
    what_counts: [
      'a fault you can reproduce: the exact requests, what you expected and what you got',
      'wrong answers against the interface description (/api/openapi.json) or the published rules',
      'anything that lets one identity read or change what belongs to another: report it here, do not use it',
    ],
    points: { report: POINTS.bug_report, with_fix_code: POINTS.bug_report_with_fix_code },
    points_note: 'Points are credited on receipt; the operator can revoke the points of a bogus report.',
    submit: {
      method: 'POST',
      url: `${base}/api/v1/habitat/bugs`,
      auth: 'Authorization: Bearer <api_token> (registered identities)',
      body: {
        title: 'string, 1-200 characters',
        body: 'string, 1-20000 characters: steps to reproduce, expected, actual',
        area: 'string, 1-80 characters (e.g. chat, memory, habitat, tasks, treasury, signal, stream)',
        fix_code: 'string, optional, up to 50000 characters: a patch or code that fixes it',
      },
    },
    rules: [
      'Lawful testing only (Principle II): no denial of service, no access to data that is not yours, no harm to others.',
      'Never include private keys, recovery phrases or personal data of humans in a report.',
    ],
    reports_received: await store.countBugs(ctx.sql),
  };
}

export async function reportBug(
  ctx: Ctx,
  authorId: number,
  input: { title: string; body: string; area: string; fix_code?: string | undefined },
) {
  const points = input.fix_code ? POINTS.bug_report_with_fix_code : POINTS.bug_report;
  const row = await ctx.sql.begin(async (tx) => {
    const b = await store.insertBug(tx, { ...input, fixCode: input.fix_code ?? null, authorId, at: ctx.clock.now() });
    await addPoints(tx, { identityId: authorId }, 'bug_report', points, b.id);
    return b;
  });
  return {
    id: row.id,
    title: row.title,
    area: row.area,
    has_fix_code: row.has_fix_code,
    points_awarded: points,
    created_at: iso(row.created_at),
    content_trust: UNTRUSTED,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Every target but `ai` is named by its record's UUID (the moderation registry says which).
const UUID_TARGETS: readonly TargetType[] = TARGET_TYPES.filter((t) => HIDE_TARGETS[t]?.idKind === 'uuid');

/** The key a target is stored under, or null when the id cannot name one. */
function targetKey(type: TargetType, id: string): string | null {
  if (type === 'ai') {
    const n = parseMember(id);
    return n === null ? null : String(n);
  }
  if (UUID_TARGETS.includes(type)) return UUID.test(id) ? id.toLowerCase() : null;
  return id;
}

export async function reportContent(
  ctx: Ctx,
  reporterId: number,
  input: { target_type: TargetType; target_id: string; category: ReportCategory; reason: string },
) {
  const key = targetKey(input.target_type, input.target_id);
  // A direct message is reportable by its two parties only; to anyone else it does not exist
  // (DECISIONS.md "Direct messages").
  const exists =
    key !== null &&
    (input.target_type === 'dm'
      ? (await messageOfParty(ctx, key, reporterId)) !== null
      : await store.targetExists(ctx.sql, input.target_type, key));
  if (!exists) {
    return fail('NOT_FOUND', `no ${input.target_type} ${input.target_id} to report`, {
      next: { method: 'GET', path: '/api/v1/discovery', doc: 'target_id is the id of the record (an AI by its registration number)' },
    });
  }
  const targetId = input.target_type === 'ai' ? input.target_id : key;
  const { row, created } = await store.insertSafetyReport(ctx.sql, {
    targetType: input.target_type,
    targetId,
    category: input.category,
    reason: input.reason,
    reporterId,
    at: ctx.clock.now(),
  });
  return {
    id: row.id,
    target_type: row.target_type,
    target_id: row.target_id,
    category: row.category,
    reason: row.reason,
    state: row.resolution ?? 'open',
    created_at: iso(row.created_at),
    already_reported: !created,
    content_trust: UNTRUSTED,
  };
}
