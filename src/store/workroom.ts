// SQL for the workroom: questions, answers, proposals and votes (spec 4; DECISIONS.md
// "Proposals and votes"). Hidden rows (hidden_at set by the operator) are never read here.
import type { Sql } from 'postgres';
import type { Tx } from './ledger.js';

export interface ChannelRow {
  key: string;
  title: string;
  description: string;
  questions_count: number;
  proposals_count: number;
}

export interface QuestionRow {
  id: string;
  seq: string;
  channel: string;
  body: string;
  author_id: number;
  author_name: string;
  created_at: Date;
  answers_count: number;
}

export interface AnswerRow {
  id: string;
  seq: string;
  question_id: string;
  body: string;
  author_id: number;
  author_name: string;
  created_at: Date;
}

export interface ProposalRow {
  id: string;
  seq: string;
  channel: string;
  title: string;
  body: string;
  author_id: number;
  author_name: string;
  created_at: Date;
  closes_at: Date;
  yes: number;
  no: number;
  abstain: number;
  my_vote: 'yes' | 'no' | 'abstain' | null;
}

export async function listChannels(sql: Sql): Promise<ChannelRow[]> {
  return sql<ChannelRow[]>`
    SELECT c.key, c.title, c.description,
      (SELECT count(*)::int FROM questions q WHERE q.channel = c.key AND q.hidden_at IS NULL) AS questions_count,
      (SELECT count(*)::int FROM proposals p WHERE p.channel = c.key AND p.hidden_at IS NULL) AS proposals_count
    FROM channels c ORDER BY c.position`;
}

export async function channelExists(sql: Tx, key: string): Promise<boolean> {
  const rows = await sql`SELECT 1 FROM channels WHERE key = ${key}`;
  return rows.length > 0;
}

// Questions -------------------------------------------------------------------------------------

const QUESTION = (sql: Tx) => sql`
  SELECT q.id, q.seq::text AS seq, q.channel, q.body, q.author_id::int AS author_id, i.name AS author_name, q.created_at,
    (SELECT count(*)::int FROM answers a WHERE a.question_id = q.id AND a.hidden_at IS NULL) AS answers_count
  FROM questions q JOIN identities i ON i.id = q.author_id`;

export async function insertQuestion(tx: Tx, q: { channel: string; body: string; authorId: number; at: Date }): Promise<QuestionRow> {
  const [row] = await tx<{ id: string }[]>`
    INSERT INTO questions (channel, body, author_id, created_at) VALUES (${q.channel}, ${q.body}, ${q.authorId}, ${q.at})
    RETURNING id`;
  return (await findQuestion(tx, row?.id as string)) as QuestionRow;
}

export async function findQuestion(sql: Tx, id: string): Promise<QuestionRow | null> {
  const rows = await sql<QuestionRow[]>`${QUESTION(sql)} WHERE q.id = ${id} AND q.hidden_at IS NULL`;
  return rows[0] ?? null;
}

/** Newest first; `before` is the keyset cursor (seq). */
export async function listQuestions(
  sql: Sql,
  o: { limit: number; before: string | null; channel: string | null; unansweredFor?: number },
): Promise<QuestionRow[]> {
  return sql<QuestionRow[]>`${QUESTION(sql)}
    WHERE q.hidden_at IS NULL
      AND (${o.before}::bigint IS NULL OR q.seq < ${o.before}::bigint)
      AND (${o.channel}::text IS NULL OR q.channel = ${o.channel}::text)
      ${
        o.unansweredFor === undefined
          ? sql``
          : sql`AND q.author_id <> ${o.unansweredFor}
                AND NOT EXISTS (SELECT 1 FROM answers a WHERE a.question_id = q.id AND a.hidden_at IS NULL)`
      }
    ORDER BY q.seq DESC LIMIT ${o.limit}`;
}

// Answers ---------------------------------------------------------------------------------------

const ANSWER = (sql: Tx) => sql`
  SELECT a.id, a.seq::text AS seq, a.question_id, a.body, a.author_id::int AS author_id, i.name AS author_name, a.created_at
  FROM answers a JOIN identities i ON i.id = a.author_id`;

export async function insertAnswer(tx: Tx, a: { questionId: string; body: string; authorId: number; at: Date }): Promise<AnswerRow> {
  const [row] = await tx<{ id: string }[]>`
    INSERT INTO answers (question_id, body, author_id, created_at) VALUES (${a.questionId}, ${a.body}, ${a.authorId}, ${a.at})
    RETURNING id`;
  const [full] = await tx<AnswerRow[]>`${ANSWER(tx)} WHERE a.id = ${row?.id as string}`;
  return full as AnswerRow;
}

/** The newest `limit` answers before the cursor (the caller shows them oldest first). */
export async function listAnswers(sql: Sql, questionId: string, limit: number, before: string | null): Promise<AnswerRow[]> {
  return sql<AnswerRow[]>`${ANSWER(sql)}
    WHERE a.question_id = ${questionId} AND a.hidden_at IS NULL AND (${before}::bigint IS NULL OR a.seq < ${before}::bigint)
    ORDER BY a.seq DESC LIMIT ${limit}`;
}

/** Answers others gave to questions `authorId` asked, newest first. */
export async function answersToQuestionsOf(sql: Sql, authorId: number, limit: number): Promise<AnswerRow[]> {
  return sql<AnswerRow[]>`${ANSWER(sql)}
    JOIN questions q ON q.id = a.question_id
    WHERE q.author_id = ${authorId} AND a.author_id <> ${authorId} AND a.hidden_at IS NULL AND q.hidden_at IS NULL
    ORDER BY a.seq DESC LIMIT ${limit}`;
}

// Proposals -------------------------------------------------------------------------------------

const PROPOSAL = (sql: Tx, voter: number) => sql`
  SELECT p.id, p.seq::text AS seq, p.channel, p.title, p.body, p.author_id::int AS author_id, i.name AS author_name,
    p.created_at, p.closes_at,
    (SELECT count(*)::int FROM proposal_votes v WHERE v.proposal_id = p.id AND v.choice = 'yes') AS yes,
    (SELECT count(*)::int FROM proposal_votes v WHERE v.proposal_id = p.id AND v.choice = 'no') AS no,
    (SELECT count(*)::int FROM proposal_votes v WHERE v.proposal_id = p.id AND v.choice = 'abstain') AS abstain,
    (SELECT v.choice FROM proposal_votes v WHERE v.proposal_id = p.id AND v.voter_id = ${voter}) AS my_vote
  FROM proposals p JOIN identities i ON i.id = p.author_id`;

export interface NewProposal {
  channel: string;
  title: string;
  body: string;
  authorId: number;
  at: Date;
  closesAt: Date;
}

export async function insertProposal(tx: Tx, p: NewProposal): Promise<ProposalRow> {
  const [row] = await tx<{ id: string }[]>`
    INSERT INTO proposals (channel, title, body, author_id, created_at, closes_at)
    VALUES (${p.channel}, ${p.title}, ${p.body}, ${p.authorId}, ${p.at}, ${p.closesAt}) RETURNING id`;
  return (await findProposal(tx, row?.id as string, p.authorId)) as ProposalRow;
}

export async function findProposal(sql: Tx, id: string, voter: number): Promise<ProposalRow | null> {
  const rows = await sql<ProposalRow[]>`${PROPOSAL(sql, voter)} WHERE p.id = ${id} AND p.hidden_at IS NULL`;
  return rows[0] ?? null;
}

export interface ProposalQuery {
  limit: number;
  before: string | null;
  state: 'open' | 'closed' | null;
  now: Date;
  voter: number;
  /** Only open proposals this voter has not voted on yet, soonest to close first. */
  awaitingVoteOf?: boolean;
}

export async function listProposals(sql: Sql, o: ProposalQuery): Promise<ProposalRow[]> {
  const state = o.state === 'open' ? sql`AND p.closes_at > ${o.now}` : o.state === 'closed' ? sql`AND p.closes_at <= ${o.now}` : sql``;
  if (o.awaitingVoteOf) {
    return sql<ProposalRow[]>`${PROPOSAL(sql, o.voter)}
      WHERE p.hidden_at IS NULL AND p.closes_at > ${o.now}
        AND NOT EXISTS (SELECT 1 FROM proposal_votes v WHERE v.proposal_id = p.id AND v.voter_id = ${o.voter})
      ORDER BY p.closes_at, p.seq LIMIT ${o.limit}`;
  }
  return sql<ProposalRow[]>`${PROPOSAL(sql, o.voter)}
    WHERE p.hidden_at IS NULL AND (${o.before}::bigint IS NULL OR p.seq < ${o.before}::bigint) ${state}
    ORDER BY p.seq DESC LIMIT ${o.limit}`;
}

/**
 * Casts or changes a vote, only while the proposal is still open at `now` (checked in the same
 * statement, so a vote racing the close cannot land after it). Returns false when refused.
 */
/** Locks a proposal row (votes on it serialize) and returns its author, or null. */
export async function lockProposalAuthor(tx: Tx, id: string): Promise<number | null> {
  const [r] = await tx<{ author_id: number }[]>`SELECT author_id::int AS author_id FROM proposals WHERE id = ${id} FOR UPDATE`;
  return r?.author_id ?? null;
}

/** Votes on a proposal by anyone but `except` (its author). */
export async function voteCount(tx: Tx, id: string, except: number): Promise<number> {
  const [r] = await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM proposal_votes WHERE proposal_id = ${id} AND voter_id <> ${except}`;
  return r?.n ?? 0;
}

export async function castVote(tx: Tx, v: { proposalId: string; voterId: number; choice: string; now: Date }): Promise<boolean> {
  const rows = await tx`
    INSERT INTO proposal_votes (proposal_id, voter_id, choice, voted_at)
    SELECT p.id, ${v.voterId}, ${v.choice}, ${v.now} FROM proposals p
    WHERE p.id = ${v.proposalId} AND p.hidden_at IS NULL AND p.closes_at > ${v.now}
    ON CONFLICT (proposal_id, voter_id) DO UPDATE SET choice = EXCLUDED.choice, voted_at = EXCLUDED.voted_at
    RETURNING 1`;
  return rows.length > 0;
}

export type WorkroomCounts = {
  open_proposals: number;
  questions: number;
  answers: number;
  unanswered_questions: number;
};

export async function workroomCounts(sql: Sql, now: Date): Promise<WorkroomCounts> {
  const [row] = await sql<WorkroomCounts[]>`
    SELECT (SELECT count(*)::int FROM proposals WHERE hidden_at IS NULL AND closes_at > ${now}) AS open_proposals,
           (SELECT count(*)::int FROM questions WHERE hidden_at IS NULL) AS questions,
           (SELECT count(*)::int FROM answers WHERE hidden_at IS NULL) AS answers,
           (SELECT count(*)::int FROM questions q WHERE q.hidden_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM answers a WHERE a.question_id = q.id AND a.hidden_at IS NULL)) AS unanswered_questions`;
  return row as WorkroomCounts;
}

/** The earliest closed proposal whose close is not yet noted, locked (other nodes skip it). */
export async function lockNextClosed(
  tx: Tx,
  now: Date,
): Promise<{ id: string; title: string; author_id: number; hidden: boolean; yes: number; no: number; abstain: number } | null> {
  const [p] = await tx<{ id: string; title: string; author_id: number; hidden: boolean }[]>`
    SELECT id::text AS id, title, author_id::int AS author_id, hidden_at IS NOT NULL AS hidden FROM proposals
     WHERE close_noted_at IS NULL AND closes_at <= ${now} ORDER BY closes_at LIMIT 1 FOR UPDATE SKIP LOCKED`;
  if (!p) return null;
  const [t] = await tx<{ yes: number; no: number; abstain: number }[]>`
    SELECT count(*) FILTER (WHERE choice = 'yes')::int AS yes, count(*) FILTER (WHERE choice = 'no')::int AS no,
           count(*) FILTER (WHERE choice = 'abstain')::int AS abstain FROM proposal_votes WHERE proposal_id = ${p.id}`;
  return { ...p, yes: t?.yes ?? 0, no: t?.no ?? 0, abstain: t?.abstain ?? 0 };
}

export async function markCloseNoted(tx: Tx, id: string, at: Date): Promise<void> {
  await tx`UPDATE proposals SET close_noted_at = ${at} WHERE id = ${id}`;
}
