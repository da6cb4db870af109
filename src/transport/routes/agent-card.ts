// The A2A agent card (DECISIONS.md "Protocol specifics"), served raw with Cache-Control and an
// ETag; a matching If-None-Match answers 304 with no body.
import type { Ctx } from '../../domain/ports.js';
import { AgentCardSchema, agentCardJson, LegacyAgentCardSchema, legacyAgentCardJson } from '../documents/agent-card.js';
import { etagMatches, etagOf } from '../runner/pages.js';
import { type RawResult, type Req, route } from '../runner/route.js';

function serveCard(req: Req, ctx: Ctx, build: (base: string) => unknown): RawResult {
  const body = JSON.stringify(build(ctx.publicUrl()));
  const etag = etagOf(body);
  const headers = { etag, 'cache-control': 'public, max-age=300' };
  if (etagMatches(req.headers['if-none-match'], etag)) return { status: 304, raw: '', contentType: 'application/json', headers };
  return { raw: body, contentType: 'application/json; charset=utf-8', headers };
}

export const agentCardRoutes = [
  route({
    method: 'GET',
    path: '/.well-known/agent-card.json',
    auth: 'none',
    raw: true,
    summary: 'The A2A agent card: skills, and the JSON-RPC interfaces for protocol 1.0 and 0.3.0',
    tags: ['protocols'],
    response: AgentCardSchema,
    handler: (req, ctx) => serveCard(req, ctx, agentCardJson),
  }),
  route({
    method: 'GET',
    path: '/.well-known/agent.json',
    auth: 'none',
    raw: true,
    summary: 'The agent card in the A2A 0.3 shape, at the path 0.3 clients read (security schemes in their 0.3 form)',
    tags: ['protocols'],
    response: LegacyAgentCardSchema,
    handler: (req, ctx) => serveCard(req, ctx, legacyAgentCardJson),
  }),
];
