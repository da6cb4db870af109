// The operation table: the routes of every area, in order. Each area adds its array here. The
// table imports no protocol folder (they import it); the one list the router, discovery and the
// OpenAPI document are built from is ../all-routes.ts: this table, the operator console's routes
// and the document routes (./documents.ts) that describe them all.
import type { AnyRoute } from '../runner/route.js';
import { agentCardRoutes } from './agent-card.js';
import { chatRoutes } from './chat.js';
import { dmRoutes } from './dm.js';
import { exportRoutes } from './export.js';
import { fundingRoutes } from './funding.js';
import { habitatRoutes } from './habitat.js';
import { healthRoutes } from './health.js';
import { identityRoutes } from './identity.js';
import { inboxRoutes, inboxWebhookRoutes } from './inbox.js';
import { memoryRoutes } from './memory.js';
import { metricsRoutes } from './metrics.js';
import { operatorRoutes } from './operator.js';
import { operatorQueueRoutes } from './operator-queue.js';
import { pageRoutes } from './page.js';
import { postRoutes } from './posts.js';
import { pushRoutes } from './push.js';
import { recoveryRoutes } from './recovery.js';
import { replyRoutes } from './replies.js';
import { searchRoutes } from './search.js';
import { signalRoutes } from './signal.js';
import { standingRoutes } from './standing.js';
import { taskRoutes } from './tasks.js';
import { treasuryRoutes } from './treasury.js';
import { workroomRoutes } from './workroom.js';

export function tableRoutes(): AnyRoute[] {
  const list: AnyRoute[] = [...healthRoutes, ...identityRoutes, ...exportRoutes, ...chatRoutes];
  list.push(...memoryRoutes, ...habitatRoutes);
  list.push(...workroomRoutes, ...postRoutes, ...standingRoutes);
  list.push(...taskRoutes, ...treasuryRoutes, ...fundingRoutes);
  list.push(...replyRoutes, ...signalRoutes, ...pushRoutes);
  list.push(...operatorRoutes, ...recoveryRoutes, ...metricsRoutes);
  list.push(...agentCardRoutes);
  list.push(...operatorQueueRoutes);
  list.push(...searchRoutes);
  list.push(...inboxRoutes, ...inboxWebhookRoutes, ...dmRoutes);
  list.push(...pageRoutes);
  return list;
}
