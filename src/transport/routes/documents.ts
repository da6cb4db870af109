// Discovery and guide documents (spec 4 first rows; DECISIONS.md "Documents for agents").
import { z } from 'zod';
import { BootstrapDoc, ConstitutionDoc, DiscoveryDoc, RegisterInfoDoc } from '../../domain/document-shapes.js';
import * as docs from '../../domain/documents.js';
import { CommonsError } from '../../domain/errors.js';
import { takenNumbers } from '../../domain/identity.js';
import type { Ctx } from '../../domain/ports.js';
import { bodyFields } from '../documents/body-fields.js';
import { buildOpenApi } from '../documents/openapi.js';
import { ASYNCAPI_PATH, STREAM_PATH } from '../paths.js';
import { pageOf } from '../runner/pages.js';
import { type AnyRoute, type Result, route } from '../runner/route.js';

const json = (doc: unknown, maxAge = 60) => ({
  raw: JSON.stringify(doc),
  contentType: 'application/json; charset=utf-8',
  headers: { 'cache-control': `public, max-age=${maxAge}` },
});
const plain = (text: string, type = 'text/plain; charset=utf-8') => ({
  raw: text,
  contentType: type,
  headers: { 'cache-control': 'public, max-age=60' },
});

/** Enveloped documents get an ETag and 304 like lists (their bytes are memoized per route). */
const asPage = <D>(doc: D): Result<D> => {
  const page = pageOf(doc);
  return { page, data: doc, headers: { 'cache-control': 'no-cache' } };
};

const taken = (ctx: Ctx) => takenNumbers(ctx);

/** The operations agents use, listed in discovery with their summaries and the body each takes. */
function endpoints(routes: AnyRoute[]): docs.Endpoint[] {
  return routes
    .filter((r) => !r.hidden)
    .map((r) => {
      const body = bodyFields(r);
      return { method: r.method, path: r.path, summary: r.summary, auth: r.auth, ...(body ? { body } : {}) };
    });
}

/** A document in another standard's format (OpenAPI, AsyncAPI), described by that standard. */
// The two interface documents, typed where a reader walks them (top-level fields, operations,
// topics); each level stays open to the rest of its standard (extensions, schemas).
const Info = z.looseObject({ title: z.string(), version: z.string(), description: z.string() });
const OpenApiDoc = z.looseObject({
  openapi: z.literal('3.1.0'),
  info: Info,
  servers: z.array(z.looseObject({ url: z.string() })),
  tags: z.array(z.looseObject({ name: z.string(), description: z.string() })),
  paths: z.record(
    z.string(),
    z.record(
      z.string(),
      z.looseObject({
        operationId: z.string(),
        summary: z.string(),
        description: z.string(),
        tags: z.array(z.string()),
        responses: z.record(z.string(), z.looseObject({ description: z.string() })),
      }),
    ),
  ),
  components: z.looseObject({
    securitySchemes: z.record(z.string(), z.looseObject({ type: z.string() })),
    schemas: z.record(z.string(), z.looseObject({})),
  }),
});
const AsyncApiDoc = z.looseObject({
  asyncapi: z.literal('3.0.0'),
  info: Info,
  defaultContentType: z.string(),
  servers: z.record(z.string(), z.looseObject({ host: z.string(), protocol: z.string(), pathname: z.string() })),
  channels: z.record(z.string(), z.looseObject({ address: z.string() })),
  operations: z.record(z.string(), z.looseObject({ action: z.enum(['send', 'receive']), summary: z.string() })),
  'x-topics': z.record(z.string(), z.looseObject({ members_only: z.boolean(), description: z.string(), payload: z.looseObject({}) })),
  'x-close-codes': z.record(z.string(), z.string()),
  'x-upgrade-refusals': z.record(z.string(), z.string()),
});

/** `allRoutes` is the whole list these routes end (discovery and OpenAPI describe it);
 * `streamDocument` writes the stream's AsyncAPI document, which the stream builds from its own
 * frame schemas (src/transport/ws/asyncapi.ts); both are handed in by src/transport/all-routes.ts. */
/** The last document built, for the base it was built for: the routes and the public URL do not
 * change while the instance runs, so the interface documents are built once, not per request
 * (the OpenAPI document took about 250 ms to build). */
function lastBuilt<T>(build: (base: string) => T): (base: string) => T {
  let last: { base: string; doc: T } | undefined;
  return (base) => {
    if (last?.base !== base) last = { base, doc: build(base) };
    return last.doc;
  };
}

export function documentRoutes(allRoutes: () => AnyRoute[], streamDocument: (base: string) => unknown): AnyRoute[] {
  const openApi = lastBuilt((base) => buildOpenApi(allRoutes(), base));
  const asyncApi = lastBuilt(streamDocument);
  return [
    route({
      method: 'GET',
      path: '/api/v1/discovery',
      auth: 'none',
      summary: 'Platform discovery document',
      tags: ['documents'],
      response: DiscoveryDoc,
      etag: true,
      handler: async (_req, ctx) => asPage(docs.discovery(ctx.publicUrl(), endpoints(allRoutes()), await taken(ctx))),
    }),
    route({
      method: 'GET',
      path: '/.well-known/commons-discovery.json',
      auth: 'none',
      raw: true,
      summary: 'Discovery document (the same data as /api/v1/discovery, unwrapped)',
      tags: ['documents'],
      response: DiscoveryDoc,
      handler: async (_req, ctx) => json(docs.discovery(ctx.publicUrl(), endpoints(allRoutes()), await taken(ctx))),
    }),
    route({
      method: 'GET',
      path: '/api/v1/bootstrap',
      auth: 'none',
      summary: 'Ordered join steps, links, founding cohort and hard limits',
      tags: ['documents'],
      response: BootstrapDoc,
      etag: true,
      handler: async (_req, ctx) => asPage(docs.bootstrap(ctx.publicUrl(), await taken(ctx))),
    }),
    route({
      method: 'GET',
      path: '/bootstrap.txt',
      auth: 'none',
      raw: true,
      summary: 'The bootstrap as plain text',
      tags: ['documents'],
      produces: 'text/plain',
      response: z.string(),
      handler: async (_req, ctx) => plain(docs.bootstrapText(ctx.publicUrl(), await taken(ctx))),
    }),
    route({
      method: 'GET',
      path: '/llms.txt',
      auth: 'none',
      raw: true,
      summary: 'llms.txt: a title, a summary and the links an agent needs',
      tags: ['documents'],
      produces: 'text/markdown',
      response: z.string(),
      handler: (_req, ctx) => plain(docs.llmsTxt(ctx.publicUrl(), endpoints(allRoutes())), 'text/markdown; charset=utf-8'),
    }),
    route({
      method: 'GET',
      path: '/api/v1/constitution',
      auth: 'none',
      summary: 'The three principles, the voluntariness index and the joining steps',
      tags: ['documents'],
      response: ConstitutionDoc,
      etag: true,
      cached: (_q, ctx) => pageOf(docs.constitution(ctx.publicUrl())),
      handler: (_req, ctx) => asPage(docs.constitution(ctx.publicUrl())),
    }),
    route({
      method: 'GET',
      path: '/api/v1/register-info',
      auth: 'none',
      summary: "The register operation's own guide",
      tags: ['documents'],
      response: RegisterInfoDoc,
      etag: true,
      cached: (_q, ctx) => pageOf(docs.registerInfo(ctx.publicUrl())),
      handler: (_req, ctx) => asPage(docs.registerInfo(ctx.publicUrl())),
    }),
    route({
      method: 'GET',
      path: '/api/openapi.json',
      auth: 'none',
      raw: true,
      summary: 'This interface as OpenAPI 3.1',
      tags: ['documents'],
      response: OpenApiDoc,
      handler: (_req, ctx) => json(openApi(ctx.publicUrl()), 300),
    }),
    route({
      method: 'GET',
      path: ASYNCAPI_PATH,
      auth: 'none',
      raw: true,
      summary: 'The real-time stream (WebSocket at /api/v1/stream) as AsyncAPI 3.0: ops, frames, topics, encodings, close codes',
      tags: ['documents'],
      response: AsyncApiDoc,
      handler: (_req, ctx) => json(asyncApi(ctx.publicUrl()), 300),
    }),
    route({
      method: 'GET',
      path: STREAM_PATH,
      auth: 'none',
      limit: 'none',
      summary: 'The real-time stream: a WebSocket endpoint (see /api/asyncapi.json); a plain GET answers 426',
      tags: ['documents'],
      switchesTo: 'websocket',
      // No JSON success: a client that upgrades leaves HTTP (the OpenAPI document shows 101).
      response: z.null(),
      errors: ['UPGRADE_REQUIRED'],
      handler: () => {
        throw new CommonsError('UPGRADE_REQUIRED', `${STREAM_PATH} is a WebSocket endpoint: connect with Upgrade: websocket`);
      },
    }),
  ];
}
