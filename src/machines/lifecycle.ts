// Shared helper: ask a pure machine which state a move leads to, from a state value that the
// database recorded. Returns null when the machine refuses the move (the caller answers 409).
import { type AnyStateMachine, type EventFromLogic, transition } from 'xstate';

// Answers of events that carry nothing but their type, per machine. The context is always empty
// here and xstate's guards are pure, so such an answer depends only on (state, event type): it is
// asked of the machine once. Asking costs an actor scope and a snapshot each time (about 5% of a
// node's time on task moves under load, node --cpu-prof); an event with a payload is always asked.
const answers = new WeakMap<AnyStateMachine, Map<string, string | null>>();

export function nextState<M extends AnyStateMachine>(machine: M, from: string, event: EventFromLogic<M>): string | null {
  const plain = Object.keys(event).length === 1;
  let known = answers.get(machine);
  const key = `${from}\u0000${event.type}`;
  if (plain && known?.has(key)) return known.get(key) as string | null;
  const answer = decide(machine, from, event);
  if (plain) {
    if (!known) {
      known = new Map();
      answers.set(machine, known);
    }
    known.set(key, answer);
  }
  return answer;
}

function decide<M extends AnyStateMachine>(machine: M, from: string, event: EventFromLogic<M>): string | null {
  const snapshot = machine.resolveState({ value: from, context: {} });
  if (!snapshot.can(event)) return null;
  const [next] = transition(machine as AnyStateMachine, snapshot, event);
  return String(next.value);
}
