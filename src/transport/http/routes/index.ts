// Every HTTP route of the service, in one list: the router, discovery and the OpenAPI document
// are all built from it. Each area adds its array here.
import type { AnyRoute } from '../route.js';
import { documentRoutes } from './documents.js';
import { habitatRoutes } from './habitat.js';
import { healthRoutes } from './health.js';
import { identityRoutes } from './identity.js';
import { memoryRoutes } from './memory.js';

export function allRoutes(): AnyRoute[] {
  const list: AnyRoute[] = [...healthRoutes, ...identityRoutes];
  list.push(...memoryRoutes);
  list.push(...habitatRoutes);
  list.push(...documentRoutes(() => list));
  return list;
}
