// Proposal lifecycle (DECISIONS.md "Proposals and votes"): open -> closed. A proposal is open
// until its closes_at; the state is derived from the clock and this machine decides which moves
// each state allows (a vote after close answers 409 INVALID_STATE).
import { setup } from 'xstate';
import { nextState } from './lifecycle.js';

export type ProposalState = 'open' | 'closed';

export type ProposalEvent = { type: 'VOTE' } | { type: 'CLOSE' };

export const proposalMachine = setup({
  types: { events: {} as ProposalEvent },
}).createMachine({
  id: 'proposal',
  initial: 'open',
  states: {
    // Votes are cast and changed while open (one per identity, kept by the primary key).
    open: { on: { VOTE: 'open', CLOSE: 'closed' } },
    // The tally is final: nothing moves a closed proposal.
    closed: { type: 'final' },
  },
});

export function proposalNext(from: ProposalState, event: ProposalEvent): ProposalState | null {
  return nextState(proposalMachine, from, event) as ProposalState | null;
}

/** The state a proposal has reached at `now`: the CLOSE move fires once closes_at has passed. */
export function proposalStateAt(closesAt: Date, now: Date): ProposalState {
  if (now.getTime() < closesAt.getTime()) return 'open';
  return proposalNext('open', { type: 'CLOSE' }) ?? 'closed';
}
