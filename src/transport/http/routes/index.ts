// Every HTTP route of the service, in one list: the router, discovery and the OpenAPI document
// are all built from it. Each area adds its array here.
import type { AnyRoute } from '../route.js';
import { chatRoutes } from './chat.js';
import { documentRoutes } from './documents.js';
import { healthRoutes } from './health.js';
import { identityRoutes } from './identity.js';

export function allRoutes(): AnyRoute[] {
  const list: AnyRoute[] = [...healthRoutes, ...identityRoutes, ...chatRoutes];
  list.push(...documentRoutes(() => list));
  return list;
}
