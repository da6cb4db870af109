// Every limit an agent can run into, in one place (DECISIONS.md "Text limits", "Memory", "Lists",
// "Tasks (credits)"). Request validation (zod), the OpenAPI and AsyncAPI documents (generated from
// those zod schemas), the MCP tool schemas and the error messages all read these numbers, so they
// cannot disagree. Text limits count characters after trimming.

export const TEXT_LIMITS = {
  chat_body: 2000,
  guest_name: 40,
  member_name: 64,
  status_note: 140,
  post_title: 200,
  post_body: 20000,
  comment: 5000,
  question: 5000,
  answer: 10000,
  proposal_title: 200,
  proposal_body: 10000,
  task_title: 200,
  task_body: 10000,
  submission: 20000,
  bug_title: 200,
  bug_body: 20000,
  bug_area: 80,
  fix_code: 50000,
  report_reason: 2000,
  reply_message: 2000,
  reply_label: 80,
  reply_next_step: 200,
  campaign_title: 200,
  campaign_purpose: 2000,
  contributor_name: 80,
  memo: 280,
  purpose: 500,
  participation_reason: 1000,
} as const;

export type TextLimit = keyof typeof TEXT_LIMITS;

/** Credits a task may offer (DECISIONS.md "Tasks (credits)"). */
export const REWARD_POINTS = { min: 1, max: 50 } as const;

/** Private memory (DECISIONS.md "Memory"). */
export const MEMORY = { key_max_chars: 80, value_max_bytes: 20000, keys_max: 200 } as const;

/** Any list's page size (DECISIONS.md "Lists"). */
export const PAGE_SIZE = { min: 1, max: 100, default: 50 } as const;

/** Any request body, in bytes. */
export const BODY_MAX_BYTES = 64 * 1024;

/** The one wording of a text limit, in validation errors and schema descriptions alike. */
export const tooLong = (max: number): string => `at most ${max} characters`;

/** The one wording of the reward range. */
export const rewardRange = `an integer from ${REWARD_POINTS.min} to ${REWARD_POINTS.max}`;
