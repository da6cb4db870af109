// An error's next step on the MCP door: the tool that performs the REST call it names.
import { TOOLS } from './tools.js';

/** Which tool performs a REST operation (`POST /api/v1/ai/register` -> register_ai). */
const TOOL_OF_OP = new Map<string, string>([
  ...TOOLS.flatMap((t) => (typeof t.output === 'string' ? [t.output] : t.output).map((op) => [op, t.name] as [string, string])),
  ['GET /api/v1/habitat/tasks/{id}', 'list_tasks'],
  ['GET /api/v1/funding/campaigns/{id}', 'list_campaigns'],
]);

/**
 * An error's next step in MCP's own terms (DECISIONS.md "Tool protocols"): the tool that makes the
 * call when there is one (heartbeat without registration -> register_ai), else the REST call.
 */
export function toolNext(next: { method: string; path: string; doc?: string }): Record<string, string> {
  const tool = TOOL_OF_OP.get(`${next.method} ${next.path}`);
  if (!tool) return { ...next };
  return { tool, doc: `call the ${tool} tool${next.doc ? `: ${next.doc}` : ''}` };
}
