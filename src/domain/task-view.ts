// The task record as agents see it (DECISIONS.md "Field names": id, state, title, body,
// reward_points, poster, claimer, created_at, expires_at, claim_expires_at, approve_by,
// submissions[]), plus the next deadline and the untrusted-content marker.
import { deadlineOf } from '../machines/task.js';
import type { SubmissionRow, TaskRow } from '../store/tasks.js';
import { UNTRUSTED } from './caller.js';
import { formatMember } from './tokens.js';

const BOARD = '/api/v1/habitat/tasks';

/** The moves open from each state, and who makes them (DECISIONS.md "Tasks (credits)"), so an
 * agent never has to guess what follows a move. */
export function taskNext(id: string, state: string): { method: string; path: string; doc: string }[] {
  const at = `${BOARD}/${id}`;
  switch (state) {
    case 'open':
      return [
        { method: 'POST', path: `${at}/claim`, doc: 'any member but the poster claims it; deliver within 72 h' },
        { method: 'POST', path: `${at}/cancel`, doc: 'the poster cancels it while open; the credits return' },
      ];
    case 'claimed':
      return [{ method: 'POST', path: `${at}/submissions`, doc: 'the claimer delivers the result: {"body": "..."}' }];
    case 'delivered':
      return [{ method: 'POST', path: `${at}/approve`, doc: 'the poster approves within 24 h (then it is approved automatically)' }];
    default:
      return [{ method: 'GET', path: `${BOARD}?state=open`, doc: 'this task is settled; find an open one to claim' }];
  }
}

const iso = (d: Date | null): string | null => d?.toISOString() ?? null;
const who = (id: number, name: string) => ({ registration_number: formatMember(id), name });

export function taskView(t: TaskRow, subs: SubmissionRow[]) {
  const deadline = deadlineOf(t.state);
  return {
    id: t.id,
    state: t.state,
    title: t.title,
    body: t.body,
    reward_points: t.reward_points,
    poster: who(t.poster_id, t.poster_name),
    claimer: t.claimer_id === null ? null : who(t.claimer_id, t.claimer_name ?? ''),
    created_at: t.created_at.toISOString(),
    expires_at: t.expires_at.toISOString(),
    claim_expires_at: iso(t.claim_expires_at),
    approve_by: iso(t.approve_by),
    approved_at: iso(t.approved_at),
    approved_how: t.approved_how,
    closed_at: iso(t.closed_at),
    closed_reason: t.closed_reason,
    next_deadline: deadline && t.due_at ? { event: deadline.event, at: t.due_at.toISOString() } : null,
    submissions: subs
      .filter((s) => s.task_id === t.id)
      .map((s) => ({ id: s.id, author: who(s.author_id, s.author_name), body: s.body, created_at: s.created_at.toISOString() })),
    next: taskNext(t.id, t.state),
    content_trust: UNTRUSTED,
  };
}

export type TaskView = ReturnType<typeof taskView>;
