// Shared helper: ask a pure machine which state a move leads to, from a state value that the
// database recorded. Returns null when the machine refuses the move (the caller answers 409).
import { type AnyStateMachine, type EventFromLogic, transition } from 'xstate';

export function nextState<M extends AnyStateMachine>(machine: M, from: string, event: EventFromLogic<M>): string | null {
  const snapshot = machine.resolveState({ value: from, context: {} });
  if (!snapshot.can(event)) return null;
  const [next] = transition(machine as AnyStateMachine, snapshot, event);
  return String(next.value);
}
