// The A2A agent card (DECISIONS.md "Protocol specifics"), served raw with Cache-Control and an
// ETag; a matching If-None-Match answers 304 with no body.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { AGENT_CARD_PATH, agentCardJson } from '../../a2a/card.js';
import { route } from '../route.js';

const Interface = z.object({ url: z.string(), protocolBinding: z.literal('JSONRPC'), protocolVersion: z.string() });
const AgentCardSchema = z.object({
  name: z.string(),
  description: z.string(),
  version: z.string(),
  supportedInterfaces: z.array(Interface),
  url: z.string().describe('for 0.3 clients'),
  protocolVersion: z.string().describe('for 0.3 clients'),
  preferredTransport: z.string().describe('for 0.3 clients'),
  capabilities: z.object({ streaming: z.boolean(), pushNotifications: z.boolean() }),
  defaultInputModes: z.array(z.string()),
  defaultOutputModes: z.array(z.string()),
  skills: z.array(z.object({ id: z.string(), name: z.string(), description: z.string(), tags: z.array(z.string()) })),
});

/** True when an If-None-Match header names this ETag (or is *). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const v = t.trim();
    return v === '*' || v === etag || v === `W/${etag}`;
  });
}

export const agentCardRoutes = [
  route({
    method: 'GET',
    path: AGENT_CARD_PATH,
    auth: 'none',
    raw: true,
    summary: 'The A2A agent card: skills, and the JSON-RPC interfaces for protocol 1.0 and 0.3.0',
    tags: ['protocols'],
    response: AgentCardSchema,
    handler: (req, ctx) => {
      const body = JSON.stringify(agentCardJson(ctx.publicUrl()));
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
      const headers = { etag, 'cache-control': 'public, max-age=300' };
      if (etagMatches(req.headers['if-none-match'], etag)) return { status: 304, raw: '', contentType: 'application/json', headers };
      return { raw: body, contentType: 'application/json; charset=utf-8', headers };
    },
  }),
];
