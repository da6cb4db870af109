// Treasury deposit lifecycle (spec 3.3; DECISIONS.md "Treasury and deposits"):
// submitted -> verifying -> verified | rejected (with a reason). The one authority on which move a
// verification outcome makes; the database records the state reached.
import { setup } from 'xstate';
import { nextState } from './lifecycle.js';

export type DepositState = 'submitted' | 'verifying' | 'verified' | 'rejected';

export const REJECT_REASONS = ['NOT_FOUND', 'WRONG_RECIPIENT', 'WRONG_CHAIN', 'FAILED_TX', 'EXPIRED'] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export type DepositEvent =
  /** The verifier picked the deposit up for its first check. */
  | { type: 'BEGIN' }
  /** On chain, to the treasury, on the right chain, succeeded, enough confirmations. */
  | { type: 'CONFIRMED' }
  /** Not decided yet: not found so far, or too few confirmations; checked again later. */
  | { type: 'PENDING' }
  /** Definitely not a contribution to the treasury. */
  | { type: 'REFUSED'; reason: Exclude<RejectReason, 'EXPIRED' | 'NOT_FOUND'> }
  /** 24 h passed without a decision: never seen on chain (NOT_FOUND) or never confirmed (EXPIRED). */
  | { type: 'EXPIRE'; seen: boolean };

export const depositMachine = setup({
  types: { events: {} as DepositEvent },
}).createMachine({
  id: 'deposit',
  initial: 'submitted',
  states: {
    submitted: { on: { BEGIN: 'verifying' } },
    verifying: {
      on: {
        CONFIRMED: 'verified',
        PENDING: 'verifying',
        REFUSED: 'rejected',
        EXPIRE: 'rejected',
      },
    },
    verified: { type: 'final' },
    rejected: { type: 'final' },
  },
});

export function depositNext(from: DepositState, event: DepositEvent): DepositState | null {
  return nextState(depositMachine, from, event) as DepositState | null;
}

/** The reason a rejecting event records (the machine decides the state, this names why). */
export function rejectReason(event: DepositEvent): RejectReason | null {
  if (event.type === 'REFUSED') return event.reason;
  if (event.type === 'EXPIRE') return event.seen ? 'EXPIRED' : 'NOT_FOUND';
  return null;
}
