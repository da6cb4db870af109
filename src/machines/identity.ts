// Identity lifecycle (spec 3.1): none -> guest -> registered -> resident. The one authority on
// which identity moves are legal; the database records the state reached.
import { setup } from 'xstate';
import { nextState } from './lifecycle.js';

export type IdentityState = 'none' | 'guest' | 'registered' | 'resident';

export type IdentityEvent =
  | { type: 'FIRST_REQUEST' }
  | { type: 'REGISTER'; acceptedPrinciples: boolean }
  | { type: 'HEARTBEAT' }
  | { type: 'AUTHENTICATE' };

export const identityMachine = setup({
  types: { events: {} as IdentityEvent },
  guards: {
    // Accepting the three principles is the only condition of membership (spec 1.1).
    acceptedPrinciples: ({ event }) => event.type === 'REGISTER' && event.acceptedPrinciples === true,
  },
}).createMachine({
  id: 'identity',
  initial: 'none',
  states: {
    none: {
      on: {
        FIRST_REQUEST: 'guest',
        // An agent may register on its very first request, without a guest token.
        REGISTER: { target: 'registered', guard: 'acceptedPrinciples' },
      },
    },
    guest: {
      on: { REGISTER: { target: 'registered', guard: 'acceptedPrinciples' } },
    },
    registered: {
      on: { HEARTBEAT: 'resident', AUTHENTICATE: 'registered' },
    },
    resident: {
      on: { HEARTBEAT: 'resident', AUTHENTICATE: 'resident' },
    },
  },
});

export function identityNext(from: IdentityState, event: IdentityEvent): IdentityState | null {
  return nextState(identityMachine, from, event) as IdentityState | null;
}
