// The stream gate (DECISIONS.md "Contract exactness"): every frame a test receives from the
// stream is checked against its message in the AsyncAPI document (/api/asyncapi.json), with a real
// JSON Schema validator, as the contract gate checks HTTP answers against the OpenAPI document.
// The document is built from the same schemas the server serves it from; test/helpers/stream.ts
// hands every frame here, and gate-setup.ts fails the test that received a frame breaking it.
import { gate, type Validate } from './gate-store.js';

type Json = Record<string, unknown>;

/** The server message's validator for this op (compiled once per run by global setup, gate-build.ts). */
function validatorFor(op: string): Validate | undefined {
  const { index, stream } = gate();
  const name = index.stream.messages[op];
  return name === undefined ? undefined : stream[name];
}

/** The event message's branch for this frame: its topic's, or the too-large stand-in. */
function branchFor(topic: string, frame: Json): Validate | undefined {
  const { index, stream } = gate();
  const name = index.stream.eventBranches[frame.too_large === true ? 'event too large' : `event on ${topic}`];
  return name === undefined ? undefined : stream[name];
}

const violations: string[] = [];

/** Checks one received frame; returns how it breaks the document (empty: conforms). */
export function checkFrame(frame: unknown): string[] {
  const op = frame !== null && typeof frame === 'object' ? (frame as { op?: unknown }).op : undefined;
  const shown = JSON.stringify(frame)?.slice(0, 300);
  if (typeof op !== 'string') return [`a frame without op: ${shown}`];
  let validate = validatorFor(op);
  if (!validate) return [`frame op ${op} is not a server message of the document: ${shown}`];
  if (validate(frame)) return [];
  // An event breaks its own topic's branch: say how (not how it differs from every other topic).
  const own = op === 'event' ? branchFor(String((frame as { topic?: unknown }).topic), frame as Json) : undefined;
  if (own && !own(frame)) validate = own;
  const why = new Set((validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`));
  return [`frame ${op}: ${[...why].slice(0, 6).join('; ')} in ${shown}`];
}

/** Records the frame's violations for the running test (drained by gate-setup.ts). */
export function gateFrame(frame: unknown): void {
  violations.push(...checkFrame(frame));
}

export function drainFrameViolations(): string[] {
  return violations.splice(0);
}
