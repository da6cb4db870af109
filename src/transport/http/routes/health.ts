// Liveness and readiness for the operator and load balancers.
import { z } from 'zod';
import { migrationsCurrent } from '../../../store/migrate.js';
import { route } from '../route.js';

const body = (doc: unknown, status = 200) => ({ status, raw: JSON.stringify(doc), contentType: 'application/json; charset=utf-8' });

export const healthRoutes = [
  route({
    method: 'GET',
    path: '/healthz',
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
    auth: 'none',
    raw: true,
    summary: 'The database is reachable and every migration is applied (503 otherwise)',
    tags: ['operations'],
    response: z.object({ status: z.enum(['ready', 'unavailable']), database: z.boolean(), migrations: z.boolean() }),
    handler: async (_req, ctx) => {
      let database = false;
      let migrations = false;
      try {
        await ctx.sql`SELECT 1`;
        database = true;
        migrations = await migrationsCurrent(ctx.sql);
      } catch {
        // reported below
      }
      const ready = database && migrations;
      return body({ status: ready ? 'ready' : 'unavailable', database, migrations }, ready ? 200 : 503);
    },
  }),
];
