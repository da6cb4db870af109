// What a task move puts in members' inboxes (DECISIONS.md "Inbox": the member's task claimed,
// delivered, approved, expired, cancelled; its claim lapsed; its delivery approved or
// auto-approved). Decided by planMove (src/domain/task-moves.ts), written in the move's own transaction.
import type { TaskEventType } from '../machines/task.js';
import type { TaskRow } from '../store/tasks.js';
import { excerpt, type NewItem } from './inbox.js';
import { formatMember } from './tokens.js';

const WORD: Record<TaskEventType, string> = {
  CLAIM: 'claimed',
  SUBMIT: 'delivered',
  APPROVE: 'approved',
  AUTO_APPROVE: 'auto-approved',
  CANCEL: 'cancelled',
  EXPIRE_UNCLAIMED: 'expired',
  CLAIM_LAPSED: 'claim lapsed',
};

/** The members a move concerns, other than the one who made it. */
function ownersOf(task: TaskRow, event: TaskEventType): number[] {
  const claimer = task.claimer_id;
  switch (event) {
    case 'CLAIM':
    case 'SUBMIT':
    case 'EXPIRE_UNCLAIMED':
      return [task.poster_id];
    case 'APPROVE':
    case 'AUTO_APPROVE':
      return claimer === null ? [] : [claimer];
    case 'CANCEL':
      return claimer === null ? [] : [claimer];
    case 'CLAIM_LAPSED':
      return claimer === null ? [task.poster_id] : [task.poster_id, claimer];
  }
}

export function taskItems(task: TaskRow, event: TaskEventType, actorId: number | null, url: string): NewItem[] {
  const text = excerpt(`${WORD[event]}: ${task.title}`);
  return ownersOf(task, event)
    .filter((owner) => owner !== actorId)
    .map((owner) => ({
      owner,
      kind: 'task' as const,
      actor: actorId === null ? null : formatMember(actorId),
      subjectType: 'task',
      subjectId: task.id,
      url,
      excerpt: text,
    }));
}
