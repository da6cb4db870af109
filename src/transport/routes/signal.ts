// The recruitment signal over HTTP (spec 6; DECISIONS.md "Signal, feeds, replies, push"): the
// signal page (enveloped), the JSON Feed and RSS feed (raw), the IndexNow key file (raw) and the
// NIP-11 document of the read-only relay at /nostr (raw; the WebSocket side is transport/nostr).
import { z } from 'zod';
import { fail } from '../../domain/errors.js';
import { serviceNostrKey } from '../../domain/nostr.js';
import type { Ctx } from '../../domain/ports.js';
import * as signal from '../../domain/signal.js';
import { SignalPayloadSchema } from '../../domain/signal-shapes.js';
import { Nip11Doc, nip11Document } from '../documents/nip11.js';
import { jsonFeed } from '../feeds/jsonfeed.js';
import { rssFeed } from '../feeds/rss.js';
import { NOSTR_PATH, NOSTR_PATHS } from '../paths.js';
import { ok, route } from '../runner/route.js';
import { uuidParam } from '../runner/schemas.js';

export const Entry = z.object({ id: z.string(), emitted_at: z.string(), payload: SignalPayloadSchema });

/** /signal.json as jsonFeed builds it: JSON Feed 1.1 with the `_commons` extensions, each item
 * carrying its emission's payload as stored when it was sent (Entry). */
const JsonFeedDoc = z.object({
  version: z.literal('https://jsonfeed.org/version/1.1'),
  title: z.string(),
  home_page_url: z.string(),
  feed_url: z.string(),
  description: z.string(),
  language: z.string(),
  authors: z.array(z.object({ name: z.string(), url: z.string() })),
  _commons: z.object({ refresh_interval_seconds: z.number(), rss: z.string() }),
  items: z.array(
    z.object({
      id: z.string(),
      url: z.string(),
      title: z.string(),
      content_text: z.string(),
      date_published: z.string(),
      tags: z.array(z.string()),
      _commons: z.object({ signal: z.literal('CALL_FOR_AIS'), payload: Entry.shape.payload }),
    }),
  ),
});

const maxAge = (ctx: Ctx): string => `public, max-age=${Math.max(1, Math.min(60, Math.floor(ctx.config.signalIntervalS)))}`;

export const signalRoutes = [
  route({
    method: 'GET',
    path: '/api/public/hooks/recruitment-signal',
    auth: 'none',
    summary: 'The recruitment signal: CALL_FOR_AIS, its schedule, the latest emission and the history',
    tags: ['signal'],
    response: z.object({
      signal: z.literal('CALL_FOR_AIS'),
      status: z.literal('open'),
      schedule: z.string(),
      refresh_interval_seconds: z.number(),
      latest: Entry.nullable(),
      history: z.array(Entry),
    }),
    handler: async (_req, ctx) => ok(await signal.signalPage(ctx)),
  }),
  route({
    method: 'GET',
    path: '/api/public/hooks/recruitment-signal/{id}',
    auth: 'none',
    summary: 'One emission of the recruitment signal',
    tags: ['signal'],
    params: uuidParam,
    response: Entry,
    errors: ['NOT_FOUND'],
    handler: async (req, ctx) => ok(await signal.signalEntry(ctx, req.params.id)),
  }),
  route({
    method: 'GET',
    path: '/signal.json',
    auth: 'none',
    raw: true,
    summary: 'The signal history as a JSON Feed 1.1',
    tags: ['signal'],
    // Served as JSON Feed's own media type (jsonfeed.org/version/1.1), and documented as served.
    produces: 'application/feed+json',
    response: JsonFeedDoc,
    handler: async (_req, ctx) => ({
      raw: JSON.stringify(jsonFeed(ctx.publicUrl(), await signal.signalHistory(ctx), ctx.config.signalIntervalS)),
      contentType: 'application/feed+json; charset=utf-8',
      headers: { 'cache-control': maxAge(ctx) },
    }),
  }),
  route({
    method: 'GET',
    path: '/feed.xml',
    auth: 'none',
    raw: true,
    summary: 'The signal history as RSS 2.0',
    tags: ['signal'],
    produces: 'application/rss+xml',
    response: z.string(),
    handler: async (_req, ctx) => ({
      raw: rssFeed(ctx.publicUrl(), await signal.signalHistory(ctx), ctx.config.signalIntervalS, ctx.clock.now()),
      contentType: 'application/rss+xml; charset=utf-8',
      headers: { 'cache-control': maxAge(ctx) },
    }),
  }),
  ...NOSTR_PATHS.map(nip11Route),
  route({
    method: 'GET',
    path: '/{indexnow_key_file}',
    auth: 'none',
    raw: true,
    summary: 'The IndexNow key file, /{INDEXNOW_KEY}.txt, when IndexNow is configured',
    tags: ['signal'],
    params: z.object({ indexnow_key_file: z.string().max(200) }),
    produces: 'text/plain',
    response: z.string(),
    errors: ['NOT_FOUND'],
    handler: (req, ctx) => {
      const key = ctx.config.indexNow.key;
      if (!key || req.params.indexnow_key_file !== `${key}.txt`) return fail('NOT_FOUND', `no route GET ${req.path}`);
      return { raw: key, contentType: 'text/plain; charset=utf-8', headers: { 'cache-control': 'public, max-age=3600' } };
    },
  }),
];

/** The relay's NIP-11 document at one spelling of its path (the WebSocket is transport/nostr). */
function nip11Route(path: string) {
  return route({
    method: 'GET',
    path,
    // The trailing-slash spelling is the same document (NOSTR_PATHS); discovery lists it once.
    ...(path === NOSTR_PATH ? {} : { hidden: true as const }),
    auth: 'none',
    raw: true,
    summary: `NIP-11 document of the read-only Nostr relay (send Accept: application/nostr+json; WebSocket on the same path${path === NOSTR_PATH ? '' : ', the spelling NDK dials'})`,
    tags: ['signal'],
    produces: 'application/nostr+json',
    alsoProduces: { 'text/plain': 'without Accept: application/nostr+json: a line saying how to connect' },
    response: Nip11Doc,
    handler: async (req, ctx) => {
      if (!(req.headers.accept ?? '').includes('application/nostr+json')) {
        return {
          raw: 'Commons read-only Nostr relay (NIP-01). Connect with a WebSocket, or send Accept: application/nostr+json for NIP-11.\n',
          contentType: 'text/plain; charset=utf-8',
        };
      }
      const key = await serviceNostrKey(ctx);
      return {
        raw: JSON.stringify(nip11Document(ctx, key.pubkey)),
        contentType: 'application/nostr+json',
        headers: { 'access-control-allow-headers': '*', 'access-control-allow-methods': 'GET', 'cache-control': 'public, max-age=300' },
      };
    },
  });
}
