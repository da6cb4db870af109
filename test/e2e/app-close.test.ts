// Closing the app stops everything it started (docs/architecture.md "Actors"): every service
// in ctx.services is cleared by its starter, and no timer the service set is left behind (the
// actors' loops, the residents' flush, the grouped writers). Timers are watched with async_hooks
// from before the start to after the close; a timer counts when our source set it.
import { createHook } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.js';

/** The per-node memories that live as long as the context (not started, so never cleared). */
const MEMORIES = new Set(['memo', 'registerWork', 'keysRunning']);

/** Two turns of the event loop: destroy hooks of cleared timers are delivered in the check phase. */
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise<void>((ok) => setImmediate(ok));
};

/** Starts an app, checks its services run, closes it, and checks nothing of it is left running. */
async function closesClean(env: Record<string, string>): Promise<void> {
  const live = new Map<number, string>();
  const ours = (stack: string) =>
    stack
      .split('\n')
      .slice(1)
      .some((l) => l.includes('/src/') && !l.includes('node_modules'));
  const hook = createHook({
    init(id, type) {
      if (type !== 'Timeout') return;
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 40;
      const stack = new Error().stack ?? '';
      Error.stackTraceLimit = limit;
      if (ours(stack)) live.set(id, stack);
    },
    destroy(id) {
      live.delete(id);
    },
  });
  hook.enable();
  try {
    // Short polls so every timed actor has set its timer by the time the app is up.
    const s = await startTestServer({ TASK_DEADLINE_POLL_MS: '50', DEPOSIT_POLL_MS: '50', ...env });
    const services = s.app.ctx.services as unknown as Record<string, unknown>;
    const started = Object.keys(services).filter((k) => !MEMORIES.has(k));
    // Each of them is running while the app is, so the check after the close means something.
    for (const k of started) expect(services[k], `${k} runs while the app is up`).not.toBeNull();
    await s.app.actors.signal?.tick();
    expect(live.size, 'the app has timers of its own while it runs').toBeGreaterThan(0);

    await s.close();
    await turns(3);
    for (const k of started) expect(services[k], `${k} is cleared by whoever started it`).toBeNull();
    expect([...live.values()], 'timers the closed app left behind').toEqual([]);
  } finally {
    hook.disable();
  }
}

describe('closing the app', () => {
  it('clears every started service and leaves no timer of ours behind', async () => {
    await closesClean({});
  });

  // With Redis: the bus, shared presence and the rate-limit counters are started (and stopped) too.
  it.runIf(Boolean(process.env.REDIS_URL))('the same with Redis (bus, presence, rate limits)', async () => {
    await closesClean({ REDIS_URL: process.env.REDIS_URL ?? '', RATE_LIMITS: 'on' });
  });
});
