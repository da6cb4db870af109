// Resident presence (spec 2.10, 8; DESIGN.md "Machines"): a heartbeat makes a resident online for
// 30 minutes; without another one it goes offline. The machine is the one authority on these
// moves; the lean runtime (src/actors/presence-runtime.ts) uses it as a transition function.
import { setup } from 'xstate';

export const ONLINE_WINDOW_MS = 30 * 60 * 1000;

export type PresenceState = 'offline' | 'online';
export type PresenceEvent = { type: 'HEARTBEAT' };

export const presenceMachine = setup({
  types: { events: {} as PresenceEvent },
  delays: { onlineWindow: ONLINE_WINDOW_MS },
}).createMachine({
  id: 'presence',
  initial: 'offline',
  states: {
    offline: { on: { HEARTBEAT: 'online' } },
    online: {
      // Re-entering restarts the window: each heartbeat gives a fresh 30 minutes.
      on: { HEARTBEAT: { target: 'online', reenter: true } },
      after: { onlineWindow: 'offline' },
    },
  },
});
