// Liveness and readiness for the operator and load balancers.
import { z } from 'zod';
import { readiness } from '../../domain/health.js';
import { route } from '../runner/route.js';

const body = (doc: unknown, status = 200) => ({ status, raw: JSON.stringify(doc), contentType: 'application/json; charset=utf-8' });

export const healthRoutes = [
  route({
    method: 'GET',
    path: '/healthz',
    limit: 'none',
    auth: 'none',
    raw: true,
    summary: 'The process is up',
    tags: ['operations'],
    response: z.object({ status: z.literal('ok') }),
    handler: () => body({ status: 'ok' }),
  }),
  route({
    method: 'GET',
    path: '/readyz',
    limit: 'none',
    auth: 'none',
    raw: true,
    summary: 'The database answers and every migration is applied (503 otherwise); Redis being down keeps 200 and is named in `degraded`',
    tags: ['operations'],
    response: z.object({
      status: z.enum(['ready', 'unavailable']),
      database: z.boolean(),
      migrations: z.boolean(),
      degraded: z.array(z.string()),
    }),
    statuses: { 503: { description: 'not ready: the same document, with what is missing', body: true } },
    handler: async (_req, ctx) => {
      const { database, migrations, degraded } = await readiness(ctx);
      const ready = database && migrations;
      return body({ status: ready ? 'ready' : 'unavailable', database, migrations, degraded }, ready ? 200 : 503);
    },
  }),
];
