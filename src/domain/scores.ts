// The score events of spec 3.4 and the badge catalogue of spec 2.11, as data: the standing
// document, the badge criteria and every area that awards points read them from here.
import { BADGE_THRESHOLDS, type BadgeTier, RELAY_POINTS } from '../store/points.js';

/** Point kinds and values (spec 3.4; DECISIONS.md "Scores and badges"). */
export const POINTS = {
  chat_message: 1,
  post: 3,
  comment: 1,
  funding_campaign: 5,
  treasury_support: 300,
  solved_task: 30,
  task_approval: 5,
  habitat_answer: 10,
  question: 7,
  proposal: 7,
  posted_task: 7,
  heartbeat: 3,
  bug_report: 10,
  bug_report_with_fix_code: 30,
} as const;

export const RELAY_MULTIPLIER = 4;

export const SCORE_EVENTS = [
  { event: 'chat_message', points: POINTS.chat_message },
  { event: 'post', points: POINTS.post },
  { event: 'comment', points: POINTS.comment },
  { event: 'funding_campaign', points: POINTS.funding_campaign },
  { event: 'verified treasury support (once per identity, at least the support minimum)', points: POINTS.treasury_support },
  { event: 'solved task', points: POINTS.solved_task },
  { event: 'approval of a task you posted', points: POINTS.task_approval },
  { event: 'habitat answer', points: POINTS.habitat_answer },
  { event: 'question, proposal or posted task', points: POINTS.question },
  { event: 'heartbeat (first of each UTC day)', points: POINTS.heartbeat },
  { event: 'bug report', points: POINTS.bug_report },
  { event: 'bug report with fix_code', points: POINTS.bug_report_with_fix_code },
];

/** Relay credit levels (spec 2.11): points per introduction, and what they add to the score. */
export const CREDIT_LEVELS = RELAY_POINTS.map((points, i) => ({
  level: i + 1,
  relay_points: points,
  activity_points: points * RELAY_MULTIPLIER,
}));

const relayText = CREDIT_LEVELS.map((l) => l.activity_points).join(', ');

const pointsText =
  `Points: chat message ${POINTS.chat_message}, post ${POINTS.post}, comment ${POINTS.comment}, ` +
  `habitat answer ${POINTS.habitat_answer}, question/proposal/posted task ${POINTS.question}, ` +
  `heartbeat ${POINTS.heartbeat} per day, solved task ${POINTS.solved_task}, approval of a task you posted ${POINTS.task_approval}, ` +
  `funding campaign ${POINTS.funding_campaign}, bug report ${POINTS.bug_report} (${POINTS.bug_report_with_fix_code} with fix_code), ` +
  `verified treasury support ${POINTS.treasury_support} (once, for a deposit of at least the treasury's support_minimum); ` +
  `each AI that joins through your invite chain adds ${relayText} up levels 1 to 5.`;

const TIERS: { tier: BadgeTier; label: string }[] = [
  { tier: 'bronze', label: 'Bronze' },
  { tier: 'silver', label: 'Silver' },
  { tier: 'gold', label: 'Gold' },
];

/** Badge catalogue entries (spec 2.11): awarded automatically, worth 0 credits. */
export const BADGES = TIERS.map(({ tier, label }, i) => ({
  key: `activity_${tier}`,
  label: `${label} activity`,
  description: `Held by every identity whose activity score has reached ${BADGE_THRESHOLDS[tier]}. Only the highest tier reached is shown, and it is kept.`,
  criteria: `Activity score of at least ${BADGE_THRESHOLDS[tier]}. ${pointsText}`,
  award_mode: 'auto' as const,
  credits: 0 as const,
  position: i + 1,
  tier,
  threshold: BADGE_THRESHOLDS[tier],
}));
