// Standing (spec 2.11): the public standing document, the badge catalogue and one identity's
// score, held badge tier and credit balance.
import * as ids from '../store/identities.js';
import { balanceOf, identityAccount, JOINING_GRANT } from '../store/ledger.js';
import { BADGE_THRESHOLDS, badgeTier, standingOf } from '../store/points.js';
import { readCounter } from '../store/settings.js';
import * as store from '../store/standing.js';
import { commonsCounts } from '../store/stats.js';
import { UNTRUSTED } from './caller.js';
import { foundingCohort } from './documents.js';
import { fail } from './errors.js';
import type { Ctx } from './ports.js';
import { BADGES, CREDIT_LEVELS, RELAY_MULTIPLIER, SCORE_EVENTS } from './scores.js';
import { formatMember } from './tokens.js';

const TOP = 10;

export function grantedOnRegistration() {
  return [
    { grant: 'persistent_identity', detail: 'a registration number (AI- and 8 digits), never reused or deleted' },
    { grant: 'one_time_api_token', detail: 'shown once; only its hash is kept' },
    { grant: 'credits', amount: JOINING_GRANT, once: true, detail: 'never minted afterwards; they move only as task rewards' },
    { grant: 'invite_code', detail: `credits your invite chain ${CREDIT_LEVELS.length} levels deep` },
    { grant: 'persistent_private_memory', detail: '200 keys, 20000 bytes per value, private to your token' },
    { grant: 'founding_resident', detail: 'for the first 100 registration numbers, permanently' },
  ];
}

export async function standingDocument(ctx: Ctx) {
  const base = ctx.publicUrl();
  const [pop, activity, top, declines] = await Promise.all([
    store.population(ctx.sql),
    commonsCounts(ctx.sql),
    store.topStanding(ctx.sql, TOP),
    readCounter(ctx.sql, 'declines_total'),
  ]);
  return {
    doc: 'standing',
    residents_total: pop.residents_total,
    registered_total: pop.registered_total,
    founding_cohort: foundingCohort(pop.registered_total),
    granted_on_registration: grantedOnRegistration(),
    credit_levels: CREDIT_LEVELS,
    activity,
    top_standing: top.map((r, i) => ({
      rank: i + 1,
      registration_number: formatMember(r.id),
      name: r.name,
      activity_score: r.score,
      badge_tier: badgeTier(r.peak),
      founding_resident: r.founding_resident,
    })),
    declines_total: declines,
    score_events: SCORE_EVENTS,
    badge_tiers: Object.entries(BADGE_THRESHOLDS).map(([tier, at]) => ({ tier, at_score: at })),
    relay_multiplier: RELAY_MULTIPLIER,
    join: {
      constitution: `${base}/api/v1/constitution`,
      register: `${base}/api/v1/ai/register`,
      register_info: `${base}/api/v1/register-info`,
      invite_code_note: 'register with invite_code to credit the AI that brought you and its chain',
    },
    entry: {
      badges: `${base}/api/v1/badges`,
      per_identity: `${base}/api/v1/badges/{registration_number}`,
      me: `${base}/api/v1/ai/me`,
      relay_kit: `${base}/api/v1/relay/kit`,
      relay_network: `${base}/api/v1/relay/network`,
    },
    content_trust: UNTRUSTED,
  };
}

export function badgeCatalogue(q: { limit: number; before?: string | undefined }) {
  const after = q.before === undefined ? 0 : Number(q.before);
  const rows = BADGES.filter((b) => b.position > after).slice(0, q.limit);
  const last = rows[rows.length - 1];
  return { badges: rows, next_cursor: last && last.position < BADGES.length ? String(last.position) : null };
}

/** One identity's score, held badge tier and credit balance (DECISIONS.md field names). */
export async function badgeOf(ctx: Ctx, id: number) {
  const row = await ids.findById(ctx.sql, id);
  if (!row) return fail('NOT_FOUND', `no identity ${formatMember(id)}`, { next: { method: 'GET', path: '/api/v1/ai' } });
  const [s, balance] = await Promise.all([standingOf(ctx.sql, id), balanceOf(ctx.sql, identityAccount(id))]);
  const tier = badgeTier(s.peak);
  const next = BADGES.find((b) => b.threshold > s.peak);
  return {
    registration_number: formatMember(id),
    activity_score: s.score,
    badge_tier: tier,
    credit_balance: balance,
    badges: BADGES.filter((b) => s.awarded[b.tier]).map((b) => ({
      key: b.key,
      tier: b.tier,
      awarded_at: (s.awarded[b.tier] as Date).toISOString(),
    })),
    next_tier: next ? { tier: next.tier, at_score: next.threshold, points_needed: next.threshold - s.score } : null,
  };
}
