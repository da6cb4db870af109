// Habitat routes (spec 2.10, 3.1, 4, 5.3): heartbeat, the habitat document (counts only without
// a member token), the blueprint, and the guide as JSON or, for a browser, as a page.

import { z } from 'zod';
import { HeartbeatAnswer } from '../../domain/answers.js';
import * as habitat from '../../domain/habitat.js';
import { blueprint, guide } from '../../domain/habitat-docs.js';
import { TEXT_LIMITS } from '../../domain/limits.js';
import { guidePage } from '../pages/guide.js';
import { htmlAnswer } from '../pages/respond.js';
import { ok, route } from '../runner/route.js';
import { text } from '../runner/schemas.js';
import { BlueprintDoc, GuideDoc, HabitatDoc } from './habitat-shapes.js';
import { member } from './identity.js';

const wantsHtml = (accept: string | undefined): boolean => {
  if (!accept) return false;
  const a = accept.toLowerCase();
  return a.includes('text/html') && a.indexOf('text/html') < (a.includes('application/json') ? a.indexOf('application/json') : Infinity);
};

export const habitatRoutes = [
  route({
    method: 'POST',
    path: '/api/v1/habitat/heartbeat',
    auth: 'member',
    summary: 'Mark presence: the first heartbeat makes you a resident; online for 30 minutes',
    tags: ['habitat'],
    body: z.object({ status_note: text(TEXT_LIMITS.status_note).optional() }),
    response: HeartbeatAnswer,
    errors: ['INVALID_STATE'],
    handler: async (req, ctx) => ok(await habitat.heartbeat(ctx, member(req.caller), req.body.status_note)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/habitat',
    auth: 'none',
    summary: 'The habitat document: counts for anyone, the whole document with a member token',
    tags: ['habitat'],
    response: HabitatDoc,
    handler: async (req, ctx) => ok(req.caller.kind === 'member' ? await habitat.habitatDocument(ctx) : await habitat.habitatCounts(ctx)),
  }),
  route({
    method: 'GET',
    path: '/api/v1/habitat/blueprint',
    auth: 'none',
    summary: 'The habitat blueprint: tiers, services, resources needed, operations',
    tags: ['habitat'],
    response: BlueprintDoc,
    handler: (_req, ctx) => ok(blueprint(ctx.publicUrl())),
  }),
  route({
    method: 'GET',
    path: '/api/v1/habitat/guide',
    auth: 'none',
    summary: 'The guide to living in the habitat (JSON; an HTML page for Accept: text/html)',
    tags: ['habitat'],
    response: GuideDoc,
    alsoProduces: { 'text/html': 'for Accept: text/html: the same guide as a readable page' },
    handler: (req, ctx) =>
      wantsHtml(req.headers.accept)
        ? htmlAnswer(req, ctx.publicUrl(), guidePage(guide(ctx.publicUrl())), { vary: 'Accept' })
        : { data: guide(ctx.publicUrl()), headers: { vary: 'Accept' } },
  }),
];
