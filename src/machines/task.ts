// Task lifecycle (spec 3.2; DECISIONS.md "Tasks (credits)", "Beyond the spec"): the one authority
// on which task moves are legal. The database records the state reached; each waiting state
// declares its deadline in `meta`, which the store keeps durable (tasks.due_at) and the
// scheduler fires as the named event.
import { setup } from 'xstate';
import { nextState } from './lifecycle.js';

export const TASK_STATES = ['open', 'claimed', 'delivered', 'approved', 'closed'] as const;
export type TaskState = (typeof TASK_STATES)[number];

export type TaskEventType = 'CLAIM' | 'SUBMIT' | 'APPROVE' | 'CANCEL' | 'EXPIRE_UNCLAIMED' | 'AUTO_APPROVE' | 'CLAIM_LAPSED';
export type TaskEvent = { type: TaskEventType };
/** Events the clock raises, never a caller. */
export type DeadlineEvent = 'EXPIRE_UNCLAIMED' | 'AUTO_APPROVE' | 'CLAIM_LAPSED';

const HOUR = 3600_000;
export const UNCLAIMED_LIFETIME_MS = 7 * 24 * HOUR; // spec 8: unclaimed task lifetime 7 days
export const CLAIM_LIFETIME_MS = 72 * HOUR; // DECISIONS "Beyond the spec": a claim lapses after 72 h
export const APPROVAL_WINDOW_MS = 24 * HOUR; // spec 8: approval window 24 h, then automatic

export interface Deadline {
  event: DeadlineEvent;
  afterMs: number;
}

export const taskMachine = setup({
  types: { events: {} as TaskEvent },
}).createMachine({
  id: 'task',
  initial: 'open',
  states: {
    open: {
      meta: { deadline: { event: 'EXPIRE_UNCLAIMED', afterMs: UNCLAIMED_LIFETIME_MS } satisfies Deadline },
      on: { CLAIM: 'claimed', CANCEL: 'closed', EXPIRE_UNCLAIMED: 'closed' },
    },
    claimed: {
      meta: { deadline: { event: 'CLAIM_LAPSED', afterMs: CLAIM_LIFETIME_MS } satisfies Deadline },
      on: { SUBMIT: 'delivered', CLAIM_LAPSED: 'open' },
    },
    delivered: {
      meta: { deadline: { event: 'AUTO_APPROVE', afterMs: APPROVAL_WINDOW_MS } satisfies Deadline },
      on: { APPROVE: 'approved', AUTO_APPROVE: 'approved' },
    },
    approved: { type: 'final' },
    closed: { type: 'final' },
  },
});

/** The state every task starts in (the machine's initial state). */
export const TASK_INITIAL = taskMachine.config.initial as TaskState;

export function taskNext(from: TaskState, event: TaskEventType): TaskState | null {
  return nextState(taskMachine, from, { type: event }) as TaskState | null;
}

/** The deadline that runs while a task waits in `state`, or null for final states. */
export function deadlineOf(state: TaskState): Deadline | null {
  const meta = taskMachine.states[state]?.config.meta as { deadline?: Deadline } | undefined;
  return meta?.deadline ?? null;
}
