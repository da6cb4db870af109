// The chat indexer (issue 36; docs/chat.md "Indexing"): a post's own transaction writes only the
// row with its seq (src/store/chat.ts insertMessages); this actor derives the rest from the
// durable rows, step by step (src/domain/chat.ts indexChat: search columns, point and score,
// mention items, with the cursor's advance in the same transaction). Correctness does not depend on
// which node runs it or when: the cursor row's lock runs one step at a time across nodes, and a
// step either commits with its cursor or not at all, so a node killed anywhere loses nothing and
// doubles nothing; the next step (on this node restarted or on another) does what was left.
//
// Shape: start / wake / stop, its times read from ctx.clock, so it moves onto the common actor loop
// as it is. Woken by each post of this node once committed (ctx.services.chatIndexer), at boot
// (what was left when a node died), and every `pollMs` (posts of other nodes). A pass repeats steps
// while they come back full or a wake arrived meanwhile; a failed pass is retried at the next poll.
import { CHAT_INDEX_BATCH, indexChat, indexChatStalled } from '../domain/chat.js';
import { countDbError } from '../domain/metrics.js';
import type { Ctx } from '../domain/ports.js';
import type { Actor } from './index.js';

export interface ChatIndexer extends Actor {
  /** Asks for a pass now (or right after the one running). */
  wake(): void;
}

export function startChatIndexer(ctx: Ctx, opts: { pollMs?: number; mode?: 'on' | 'off' | 'stall' } = {}): ChatIndexer {
  const pollMs = opts.pollMs ?? ctx.config.chatIndex.pollMs;
  const mode = opts.mode ?? ctx.config.chatIndex.mode;
  let stopped = false;
  let again = false;
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;

  const step = (): Promise<number> =>
    mode === 'stall'
      ? indexChatStalled(ctx, (n) => ctx.log.info({ indexed: n }, 'chat indexer: stalled before commit (CHAT_INDEXER=stall)'))
      : indexChat(ctx);

  const pass = async (): Promise<void> => {
    do {
      again = false;
      while (!stopped && (await step()) >= CHAT_INDEX_BATCH) {}
    } while (again && !stopped);
  };

  const wake = (): void => {
    if (stopped || mode === 'off') return;
    if (running) {
      again = true;
      return;
    }
    const started = ctx.clock.now().getTime();
    running = pass()
      .catch((err: unknown) => {
        // Nothing of a failed step is kept (its transaction rolled back); the next pass redoes it.
        countDbError(ctx.metrics, err);
        if (!stopped) ctx.log.warn({ err, ms: ctx.clock.now().getTime() - started }, 'chat indexer pass failed');
      })
      .finally(() => {
        running = null;
      });
  };

  const poll = (): void => {
    timer = setTimeout(() => {
      wake();
      if (!stopped) poll();
    }, pollMs);
    timer.unref();
  };

  const indexer: ChatIndexer = {
    name: 'chat-indexer',
    wake,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (ctx.services.chatIndexer === indexer) ctx.services.chatIndexer = null;
      // A stalled step (the fault hook) never ends: the node is killed, not stopped, in that test.
      if (mode !== 'stall') await running;
    },
  };
  ctx.services.chatIndexer = indexer;
  wake();
  poll();
  return indexer;
}
