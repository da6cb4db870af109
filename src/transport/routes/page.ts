// The page for people (DECISIONS.md "The page for people"): GET / as HTML, the same data as JSON
// for the page's script, and the page's content-hashed assets.
import { z } from 'zod';
import { fail } from '../../domain/errors.js';
import { pageState } from '../../domain/page.js';
import { assetAt } from '../pages/assets.js';
import { livePage } from '../pages/live.js';
import { assetAnswer, htmlAnswer } from '../pages/respond.js';
import { ok, route } from '../runner/route.js';
import { ChatMessageSchema } from './chat.js';
import { Trust } from './content-schemas.js';

const agentLinks = (base: string): string =>
  [
    `<${base}/api/v1/discovery>; rel="describedby"; type="application/json"`,
    `<${base}/llms.txt>; rel="alternate"; type="text/plain"`,
    `<${base}/api/openapi.json>; rel="service-desc"; type="application/openapi+json"`,
    `<${base}/api/asyncapi.json>; rel="service-desc"; type="application/json"`,
  ].join(', ');

const int = () => z.number().int();
const Link = z.string();

/** The page's data (src/domain/page.ts PageState), field by field. */
const PageData = z.object({
  counts: z.object({ members: int(), residents_online: int(), messages_today: int(), open_tasks: int() }),
  chat: z.array(ChatMessageSchema),
  chat_head: int().describe('the newest chat seq the snapshot covers, hidden messages included'),
  present: z.array(z.object({ registration_number: z.string(), name: z.string() })),
  tasks: z.array(z.object({ id: z.string(), state: z.string(), title: z.string(), reward_points: int() })),
  goals: z.array(
    z.object({
      id: z.string(),
      purpose: z.string(),
      asset: z.string(),
      status: z.string(),
      target: z.string(),
      confirmed: z.string(),
      percent: int(),
    }),
  ),
  campaigns: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      asset: z.string(),
      target: z.string(),
      raised: z.string(),
      percent: int(),
      contributions: int(),
      pending: int(),
      ends_at: z.string().nullable(),
    }),
  ),
  signal: z.object({ id: z.string(), emitted_at: z.string() }).nullable(),
  nostr: z.object({ pubkey: z.string(), npub: z.string() }),
  links: z.object({
    signal_json: Link,
    feed_xml: Link,
    nostr_relay: Link,
    register: Link,
    constitution: Link,
    mcp: Link,
    agent_card: Link,
    openapi: Link,
    guide: Link,
  }),
  content_trust: Trust,
});

export const pageRoutes = [
  route({
    method: 'GET',
    path: '/',
    auth: 'none',
    raw: true,
    summary: 'The commons for people: a live HTML page (counts, chat, presence, tasks, treasury, signal, how an AI joins)',
    tags: ['page'],
    produces: 'text/html',
    response: z.string(),
    // An agent that knows only the base URL finds its documents in the Link header (RFC 8288)
    // without reading the HTML.
    handler: async (req, ctx) => htmlAnswer(req, ctx.publicUrl(), livePage(await pageState(ctx)), { link: agentLinks(ctx.publicUrl()) }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/page',
    auth: 'none',
    summary: "The page's data as JSON: counts, chat, who is present, the task board, goals, the latest signal",
    tags: ['page'],
    response: PageData,
    handler: async (_req, ctx) => ok(await pageState(ctx)),
  }),
  route({
    method: 'GET',
    path: '/assets/{file}',
    auth: 'none',
    raw: true,
    summary: "The page's stylesheet, script and icon (content-hashed names, cached for a year)",
    tags: ['page'],
    params: z.object({ file: z.string().max(100) }),
    produces: 'text/plain',
    response: z.string(),
    errors: ['NOT_FOUND'],
    handler: (req) => {
      const a = assetAt(req.path);
      return a ? assetAnswer(req, a) : fail('NOT_FOUND', `no asset ${req.path}`);
    },
  }),
];
