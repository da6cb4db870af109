// Compiles a finite, context-free XState machine into a transition table by asking the machine
// itself (`initialTransition`/`transition`) what every (state, event) pair leads to, once, at
// start. The lean runtime then steps residents through the table: the machine stays the only
// authority on moves, without an interpreted actor (about 4 KB) per resident (STYLE.md 8).
import { type AnyStateMachine, initialTransition, transition } from 'xstate';

/** What a step does to the actor's one timer. */
export type TimerOp = { kind: 'none' } | { kind: 'cancel' } | { kind: 'set'; delay: number; event: number };

export interface Step {
  next: number;
  timer: TimerOp;
}

export interface MachineTable {
  states: string[];
  events: string[];
  initial: number;
  /** steps[state][event]; null when the machine ignores the event in that state. */
  steps: (Step | null)[][];
  stateIndex(name: string): number;
  eventIndex(type: string): number;
}

interface RaiseAction {
  type: string;
  params?: { delay?: number; event?: { type: string }; sendId?: string };
}

function timerOf(actions: RaiseAction[], eventIndex: (t: string) => number): TimerOp {
  let op: TimerOp = { kind: 'none' };
  for (const a of actions) {
    if (a.type === 'xstate.cancel') op = { kind: 'cancel' };
    else if (a.type === 'xstate.raise' && typeof a.params?.delay === 'number' && a.params.event) {
      op = { kind: 'set', delay: a.params.delay, event: eventIndex(a.params.event.type) };
    } else throw new Error(`machine-table: unsupported action ${a.type}`);
  }
  return op;
}

/** `eventTypes` are the external events; delayed events are discovered from the machine. */
export function compileMachine(machine: AnyStateMachine, eventTypes: string[]): MachineTable {
  const states: string[] = [];
  const events = [...eventTypes];
  const eventIndex = (t: string): number => {
    let i = events.indexOf(t);
    if (i < 0) i = events.push(t) - 1;
    return i;
  };
  const stateIndex = (v: string): number => {
    let i = states.indexOf(v);
    if (i < 0) i = states.push(v) - 1;
    return i;
  };
  const [init, initActions] = initialTransition(machine);
  if (initActions.length > 0) throw new Error('machine-table: entry actions in the initial state are not supported');
  const initial = stateIndex(String(init.value));
  const steps: (Step | null)[][] = [];
  // Fixed point: new states and new (delayed) events can appear while exploring.
  for (let s = 0; s < states.length; s++) {
    steps[s] = [];
    for (let e = 0; e < events.length; e++) {
      const snapshot = machine.resolveState({ value: states[s] as string, context: {} });
      const event = { type: events[e] as string };
      if (!snapshot.can(event)) {
        (steps[s] as (Step | null)[])[e] = null;
        continue;
      }
      const [next, actions] = transition(machine, snapshot, event);
      (steps[s] as (Step | null)[])[e] = {
        next: stateIndex(String(next.value)),
        timer: timerOf(actions as RaiseAction[], eventIndex),
      };
    }
    // Events discovered after earlier states were explored: revisit them.
    if (s === states.length - 1 && steps.some((row) => row.length < events.length)) s = -1;
  }
  const lookup = (list: string[], what: string) => (name: string) => {
    const i = list.indexOf(name);
    if (i < 0) throw new Error(`machine-table: unknown ${what} ${name}`);
    return i;
  };
  return { states, events, initial, steps, stateIndex: lookup(states, 'state'), eventIndex: lookup(events, 'event') };
}
