// Every HTTP route of the service, in one list: the router, discovery and the OpenAPI document
// are all built from it. Each area adds its array here.
import type { AnyRoute } from '../route.js';
import { documentRoutes } from './documents.js';
import { healthRoutes } from './health.js';
import { identityRoutes } from './identity.js';
import { metricsRoutes } from './metrics.js';
import { operatorRoutes } from './operator.js';
import { recoveryRoutes } from './recovery.js';

export function allRoutes(): AnyRoute[] {
  const list: AnyRoute[] = [...healthRoutes, ...identityRoutes];
  list.push(...operatorRoutes, ...recoveryRoutes, ...metricsRoutes);
  list.push(...documentRoutes(() => list));
  return list;
}
