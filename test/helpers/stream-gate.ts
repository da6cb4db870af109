// The stream gate (DECISIONS.md "Contract exactness"): every frame a test receives from the
// stream is checked against its message in the AsyncAPI document (/api/asyncapi.json), with a real
// JSON Schema validator, as the contract gate checks HTTP answers against the OpenAPI document.
// The document is built from the same schemas the server serves it from; test/helpers/stream.ts
// hands every frame here, and gate-setup.ts fails the test that received a frame breaking it.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { buildAsyncApi } from '../../src/transport/ws/asyncapi.js';

type Json = Record<string, unknown>;

const doc = buildAsyncApi('http://gate.invalid') as { channels: { stream: { messages: Record<string, { payload: Json }> } } };
// AsyncAPI 3.0's default schema format is a superset of JSON Schema draft-07.
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
// ajv-formats is published as CommonJS with a default export.
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
(addFormats as unknown as (a: Ajv) => void)(ajv);

const compiled = new Map<string, ValidateFunction>();
function validatorFor(op: string): ValidateFunction | undefined {
  const message = doc.channels.stream.messages[`server_${op}`];
  if (!message) return undefined;
  let v = compiled.get(op);
  if (!v) {
    v = ajv.compile(message.payload);
    compiled.set(op, v);
  }
  return v;
}

const branches = new Map<string, ValidateFunction>();
/** The event message's branch for this frame: its topic's, or the too-large stand-in. */
function branchFor(topic: string, frame: Json): ValidateFunction | undefined {
  const title = frame.too_large === true ? 'event too large' : `event on ${topic}`;
  const branch = (doc.channels.stream.messages.server_event?.payload.oneOf as Json[] | undefined)?.find((b) => b.title === title);
  if (!branch) return undefined;
  let v = branches.get(title);
  if (!v) {
    v = ajv.compile(branch);
    branches.set(title, v);
  }
  return v;
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
