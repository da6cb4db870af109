// A proposal's close, with its tally, in its author's inbox (DECISIONS.md "Inbox", kind `vote`).
// Proposals close by time; the scheduler's pass (src/actors/task-deadlines.ts) notes each close
// once: the row is locked with SKIP LOCKED, the item and the mark commit together, so several
// nodes share the work and a restart neither loses nor repeats a close.
import { txWithRetry } from '../store/retry.js';
import * as store from '../store/workroom.js';
import { addItems, announce, excerpt, link, type OwnedItem } from './inbox.js';
import type { Ctx } from './ports.js';

/** Notes every close due now (up to `max`); returns how many were noted. */
export async function noteClosedProposals(ctx: Ctx, max = 200): Promise<number> {
  let n = 0;
  for (; n < max; n++) {
    const items = await txWithRetry(ctx.sql, async (tx): Promise<OwnedItem[] | null> => {
      const now = ctx.clock.now();
      const p = await store.lockNextClosed(tx, now);
      if (!p) return null;
      await store.markCloseNoted(tx, p.id, now);
      // A hidden proposal closes silently, as its other events are not announced.
      if (p.hidden) return [];
      return addItems(tx, [
        {
          owner: p.author_id,
          kind: 'vote',
          actor: null,
          subjectType: 'proposal',
          subjectId: p.id,
          url: link(ctx, `/api/v1/habitat/proposals/${p.id}`),
          excerpt: excerpt(`closed: ${p.title} (yes ${p.yes}, no ${p.no}, abstain ${p.abstain})`),
        },
      ]);
    });
    if (items === null) break;
    await announce(ctx, items);
  }
  return n;
}
