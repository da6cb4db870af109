// Every HTTP route of the service, in one list: the router (src/app.ts), discovery and the OpenAPI
// document are all built from it. The operation table (./routes) imports no protocol folder, so
// what comes from one is added here: the operator console's pages and forms (./http/operator-console,
// which run operator operations of the table) and the stream's AsyncAPI document (./ws/asyncapi.ts),
// served by the table's document routes, which come last and describe the whole list.
import { operatorConsoleRoutes } from './http/operator-console/index.js';
import { documentRoutes } from './routes/documents.js';
import { tableRoutes } from './routes/index.js';
import type { AnyRoute } from './runner/route.js';
import { buildAsyncApi } from './ws/asyncapi.js';

export function allRoutes(): AnyRoute[] {
  const list: AnyRoute[] = [...tableRoutes(), ...operatorConsoleRoutes];
  list.push(...documentRoutes(() => list, buildAsyncApi));
  return list;
}
