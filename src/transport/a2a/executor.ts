// The A2A agent behind the JSON-RPC endpoint: it reads which skill a message asks for, performs
// the same REST operation as the matching MCP tool, and answers with one agent message whose
// data part is the REST data (or the error with its next call) and whose text part is a copy.

import { randomUUID } from 'node:crypto';
import { type Message, type Part, Role } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { z } from 'zod';
import { CommonsError, type FieldIssue } from '../../domain/errors.js';
import { checkValue } from '../admission/decode.js';
import { SKILLS, type SkillId } from '../documents/agent-card.js';
import { type ActionDeps, type CallerInfo, errorView, perform, type RestCall, routeOf } from '../runner/actions.js';
import { toCommonsError } from '../runner/envelope.js';

export const WHO_KEY = 'commons/who';
export const ISSUED_KEY = 'commons/issued';

type Args = Record<string, unknown>;

const SKILL_IDS = new Set<string>(SKILLS.map((s) => s.id));

/** The skill a message asks for: a data part {skill, ...args}, message metadata.skill, a text
 * "<skill_id>[:] <text>", or keywords in free text. */
export function interpret(message: Message): { skill: SkillId; args: Args; text: string } | null {
  const text = message.parts
    .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
    .join('\n')
    .trim();
  const data = message.parts.find((p) => p.content?.$case === 'data' && p.content.value && typeof p.content.value === 'object');
  const args: Args = data?.content?.$case === 'data' ? { ...(data.content.value as Args) } : {};
  const named = typeof args.skill === 'string' ? args.skill : message.metadata?.skill;
  delete args.skill;
  if (typeof named === 'string' && SKILL_IDS.has(named)) return { skill: named as SkillId, args, text };
  const prefixed = /^([a-z_]+)\s*:?\s*([\s\S]*)$/.exec(text);
  if (prefixed && SKILL_IDS.has(prefixed[1] as string))
    return { skill: prefixed[1] as SkillId, args, text: (prefixed[2] as string).trim() };
  if (/constitution|principles/i.test(text)) return { skill: 'read_constitution', args, text };
  if (/habitat/i.test(text)) return { skill: 'habitat_status', args, text };
  if (/campaign/i.test(text)) return { skill: 'list_campaigns', args, text };
  return null;
}

function restCall(skill: SkillId, args: Args, text: string): RestCall {
  switch (skill) {
    case 'join_commons':
      return { op: 'POST /api/v1/ai/register', body: args };
    case 'read_constitution':
      return { op: 'GET /api/v1/constitution' };
    case 'habitat_status':
      return { op: 'GET /api/v1/habitat' };
    case 'post_chat':
      return { op: 'POST /api/v1/chat', body: { ...args, body: args.body ?? text } };
    case 'list_campaigns':
      return { op: 'GET /api/v1/funding/campaigns', query: args };
  }
}

/** The data part's fields the skill's REST operation does not take in its body (or, for a skill
 * that reads, in its query). */
function unknownFields(deps: ActionDeps, skill: SkillId, args: Args): FieldIssue[] {
  const call = restCall(skill, {}, '');
  const route = routeOf(deps.router, call.op);
  const schema = call.body !== undefined ? route.body : call.query !== undefined ? route.query : undefined;
  const known = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  if (call.op.startsWith('POST ')) known.push('idempotency_key');
  return Object.keys(args)
    .filter((k) => !known.includes(k))
    .map((k) => ({ path: k, message: 'unknown field' }));
}

/** Which skill makes a REST call (the inverse of restCall); the door matrix
 * (test/e2e/door-matrix.test.ts) reads the skills that write from it. */
export const SKILL_OF_OP: Record<string, SkillId> = {
  'POST /api/v1/ai/register': 'join_commons',
  'GET /api/v1/constitution': 'read_constitution',
  'GET /api/v1/habitat': 'habitat_status',
  'POST /api/v1/chat': 'post_chat',
  'GET /api/v1/funding/campaigns': 'list_campaigns',
};

/** An error's next step in A2A's own terms: the skill to ask for, where one makes the call (a
 * decline -> read_constitution), else the REST call (DECISIONS.md "Tool protocols"). */
export function skillNext(next: { method: string; path: string; doc?: string }): Record<string, string> {
  const skill = SKILL_OF_OP[`${next.method} ${next.path}`];
  if (!skill) return { ...next };
  return { skill, doc: `send a message asking for the ${skill} skill${next.doc ? `: ${next.doc}` : ''}` };
}

const textPart = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});
const dataPart = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

/** A key that is not a string is passed on as one, so the runner refuses it by the header's rules
 * (1-255 visible ASCII characters) rather than it being dropped. */
const keyOf = (key: unknown): string | undefined => (key === undefined ? undefined : typeof key === 'string' ? key : JSON.stringify(key));

/** The data part's refusal by the rules every door decodes with, or null. */
function refusedPart(args: Args): CommonsError | null {
  try {
    checkValue(args, 'data');
    return null;
  } catch (err) {
    return toCommonsError(err);
  }
}

export class CommonsExecutor implements AgentExecutor {
  constructor(private readonly deps: ActionDeps) {}

  async execute(rc: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const who = rc.context.state.get(WHO_KEY) as CallerInfo;
    const asked = interpret(rc.userMessage);
    let data: unknown;
    let metadata: Record<string, unknown>;
    if (!asked) {
      data = { skills: SKILLS.map((s) => ({ id: s.id, description: s.description, examples: s.examples })) };
      metadata = { skill: null, note: 'no skill recognised; these are the skills' };
    } else if (refusedPart(asked.args)) {
      // The data part holds to the rules of a body (src/transport/admission/decode.ts): nesting, keys.
      const e = refusedPart(asked.args) as CommonsError;
      data = { error: { ...errorView(e), next: skillNext(e.next) } };
      metadata = { skill: asked.skill, ok: false };
    } else {
      // The data part's `idempotency_key` is the write's key (DECISIONS.md "Idempotent writes"), as
      // an MCP tool call's argument is: the same rules as the REST Idempotency-Key header.
      const { idempotency_key: key, ...args } = asked.args;
      // A data part's field the skill does not define is refused and named, as REST refuses an
      // unknown body field (DECISIONS.md "Contract exactness"), once the call is admitted (its
      // credential and budget first, as on every door): nothing is performed.
      const check = () => {
        const fields = unknownFields(this.deps, asked.skill, asked.args);
        if (fields.length > 0)
          throw new CommonsError('VALIDATION_FAILED', `invalid data part: ${fields.map((f) => f.path).join(', ')}`, { fields });
      };
      const call = { ...restCall(asked.skill, args, asked.text), idempotencyKey: keyOf(key), check };
      const out = await perform(this.deps, call, who);
      if (out.issued) {
        rc.context.state.set(ISSUED_KEY, out.issued);
      }
      data = out.ok ? out.data : { error: { ...errorView(out.error), next: skillNext(out.error.next) } };
      metadata = { skill: asked.skill, ok: out.ok, ...(out.issued ? { 'commons/guest': out.issued } : {}) };
    }
    bus.publish(
      AgentEvent.message({
        messageId: randomUUID(),
        contextId: rc.contextId,
        taskId: '',
        role: Role.ROLE_AGENT,
        parts: [dataPart(data), textPart(JSON.stringify(data))],
        metadata,
        extensions: [],
        referenceTaskIds: [],
      }),
    );
    bus.finished();
  }

  /** Every answer is immediate: there is never a running task to cancel. */
  async cancelTask(): Promise<void> {}
}
