// The shapes of the node's grouped task writes (src/domain/task-commit.ts commitTaskWrites), apart so
// the context's services (ports.ts) can name them without importing the use cases.
import type { TaskEventType, TaskState } from '../machines/task.js';
import type { IdentityRow } from '../store/identities.js';
import type { OwnedItem } from '../store/inbox.js';
import type { TaskView } from './task-view.js';

export interface PostInput {
  title: string;
  body: string;
  reward_points: number;
}

export type TaskAction = Extract<TaskEventType, 'CLAIM' | 'SUBMIT' | 'APPROVE' | 'CANCEL'>;

/** A move committed: its event's seq, and the inbox items it wrote (announced with it). */
export interface FiredEvent {
  seq: string;
  taskId: string;
  event: TaskEventType | 'POST';
  from: TaskState | null;
  to: TaskState;
  items?: OwnedItem[];
}

/** A member's task write: a new task, or a move of one. `tokenHash`: the member came from the
 * node's token cache with this token, which the write's transaction checks is still its own. */
export type TaskWrite = { member: IdentityRow; tokenHash?: Buffer | undefined } & (
  | { kind: 'post'; input: PostInput; id: string }
  | { kind: 'act'; taskId: string; action: TaskAction; submission?: string | undefined }
);

/** A task write committed (its task as it now reads, the moves it made) or refused (the error). */
export type TaskDone = { ok: true; view: TaskView; fired: FiredEvent[] } | { ok: false; err: unknown };
