// The chat indexer (issue 36; docs/chat.md "Indexing"): a post's own transaction writes only the
// row with its seq (src/store/chat.ts insertMessages); this actor derives the rest from the
// durable rows, step by step (src/domain/chat.ts indexChat: search columns, point and score,
// mention items, with the cursor's advance in the same transaction). Correctness does not depend on
// which node runs it or when: the cursor row's lock runs one step at a time across nodes, and a
// step either commits with its cursor or not at all, so a node killed anywhere loses nothing and
// doubles nothing; the next step (on this node restarted or on another) does what was left.
//
// On the actors' one loop (src/actors/loop.ts). Woken by each post of this node once committed
// (ctx.services.chatIndexer), at boot (what was left when a node died), and `pollMs` after each
// pass (posts of other nodes). A post's wake runs the pass `lingerMs` later (CHAT_INDEX_LINGER_MS,
// 25 ms; an earlier one already set is kept), so the posts of that time share one step: a step
// costs PostgreSQL a fixed ~1.5 ms beside its rows (measured per row: 16 a step ~2x the cost of 64,
// BENCHMARKS.md), which steps of one post group each paid. A pass repeats steps while they come
// back full; a wake during a pass asks for one more after it; a failed pass is retried at the next
// poll.
import { CHAT_INDEX_BATCH, indexChat, indexChatStalled } from '../domain/chat.js';
import { countDbError } from '../domain/metrics.js';
import type { Ctx } from '../domain/ports.js';
import { type Actor, ActorLoop } from './loop.js';

export interface ChatIndexer extends Actor {
  /** Asks for a pass now (or right after the one running). */
  wake(): void;
}

export function startChatIndexer(ctx: Ctx, opts: { pollMs?: number; lingerMs?: number; mode?: 'on' | 'off' | 'stall' } = {}): ChatIndexer {
  const pollMs = opts.pollMs ?? ctx.config.chatIndex.pollMs;
  const lingerMs = opts.lingerMs ?? ctx.config.chatIndex.lingerMs;
  const mode = opts.mode ?? ctx.config.chatIndex.mode;

  const step = (): Promise<number> =>
    mode === 'stall'
      ? indexChatStalled(ctx, (n) => ctx.log.info({ indexed: n }, 'chat indexer: stalled before commit (CHAT_INDEXER=stall)'))
      : indexChat(ctx);

  const loop = new ActorLoop<void>(ctx, {
    name: 'chat indexer',
    async pass(signal) {
      try {
        while (!signal.aborted && (await step()) >= CHAT_INDEX_BATCH) {}
      } catch (err) {
        // Nothing of a failed step is kept (its transaction rolled back); the next pass redoes it.
        countDbError(ctx.metrics, err);
        throw err;
      }
    },
    next: () => (mode === 'off' ? null : pollMs),
    first: mode === 'off' ? null : 0,
  });

  const indexer: ChatIndexer = {
    name: 'chat-indexer',
    wake() {
      if (mode === 'off') return;
      if (lingerMs > 0) loop.wakeIn(lingerMs);
      else loop.wake();
    },
    async stop() {
      if (ctx.services.chatIndexer === indexer) ctx.services.chatIndexer = null;
      // A stalled step (the fault hook) never ends: the node is killed, not stopped, in that test.
      if (mode === 'stall') void loop.stop();
      else await loop.stop();
    },
  };
  ctx.services.chatIndexer = indexer;
  loop.start();
  return indexer;
}
