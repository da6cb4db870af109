// /metrics (DECISIONS.md: "to the operator token or from 127.0.0.1 only"). A request through a
// proxy (Forwarded / X-Forwarded-For) is not local even when the proxy connects from loopback.
// A presented token that is not the operator's answers 401; no token from elsewhere answers 403.
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { fail } from '../../domain/errors.js';
import { isOperator } from '../admission/credential.js';
import { route } from '../runner/route.js';

export function isLoopback(ip: string): boolean {
  try {
    return ipaddr.process(ip).range() === 'loopback';
  } catch {
    return false;
  }
}

export const metricsRoutes = [
  route({
    method: 'GET',
    path: '/metrics',
    auth: 'none',
    raw: true,
    limit: 'none',
    summary: 'Prometheus metrics (operator token, or a direct request from 127.0.0.1 / ::1)',
    tags: ['operations'],
    produces: 'text/plain',
    response: z.string().describe('Prometheus text exposition format'),
    errors: ['UNAUTHORIZED', 'FORBIDDEN'],
    handler: async (req, ctx) => {
      if (req.credential.bearer) {
        if (!isOperator(req.credential, ctx)) fail('UNAUTHORIZED', 'this token does not open /metrics');
      } else if (!isLoopback(req.ip) || req.headers.forwarded !== undefined || req.headers['x-forwarded-for'] !== undefined) {
        fail('FORBIDDEN', '/metrics is open to the operator token or to direct requests from 127.0.0.1 only');
      }
      const m = await ctx.metrics.render();
      return { raw: m.body, contentType: m.contentType, headers: { 'cache-control': 'no-store' } };
    },
  }),
];
