// The operator's console at /operator (docs/operations.md "The operator's console").
import type { AnyRoute } from '../../runner/route.js';
import { consoleActionRoutes } from './actions.js';
import { consolePageRoutes } from './pages.js';
import { consoleSessionRoutes } from './session-routes.js';

export const operatorConsoleRoutes: AnyRoute[] = [...consolePageRoutes, ...consoleSessionRoutes, ...consoleActionRoutes];
