// The one loop of the timed actors (src/actors/loop.ts): passes one at a time, the passes asked
// for during one shared by the one after it, the timer set from `next` with the context's clock,
// and a stop that waits for the pass under way and lets none start after it. Each pass is held
// by a barrier the test opens, so nothing here depends on timing.
import { describe, expect, it } from 'vitest';
import { ActorLoop, type LoopOptions } from '../../src/actors/loop.js';
import type { Ctx } from '../../src/domain/ports.js';
import { createLogger } from '../../src/log.js';
import { TestClock } from '../helpers/server.js';

interface Barrier {
  promise: Promise<void>;
  open: () => void;
}

function barrier(): Barrier {
  let open = () => {};
  const promise = new Promise<void>((ok) => {
    open = ok;
  });
  return { promise, open };
}

/** A loop whose passes each wait for their own barrier; `began[i]` resolves when pass i starts. */
function heldLoop(clock = new TestClock(), opts: Partial<LoopOptions<number>> = {}) {
  const ctx = { log: createLogger('silent'), clock } as unknown as Ctx;
  const gates: Barrier[] = [];
  const began: Barrier[] = [];
  const gate = (i: number) => {
    while (gates.length <= i) gates.push(barrier());
    return gates[i] as Barrier;
  };
  const start = (i: number) => {
    while (began.length <= i) began.push(barrier());
    return began[i] as Barrier;
  };
  let passes = 0;
  let ended = 0;
  let concurrent = 0;
  let most = 0;
  const signals: AbortSignal[] = [];
  const loop = new ActorLoop<number>(ctx, {
    name: 'test loop',
    async pass(signal) {
      const i = passes++;
      signals.push(signal);
      concurrent++;
      most = Math.max(most, concurrent);
      start(i).open();
      await gate(i).promise;
      concurrent--;
      ended++;
      return i;
    },
    next: () => null,
    first: null,
    ...opts,
  });
  return { loop, gate, start, signals, passes: () => passes, ended: () => ended, most: () => most };
}

describe('the actor loop', () => {
  it('runs one pass at a time; the runs asked for during a pass share the one after it', async () => {
    const t = heldLoop();
    const first = t.loop.run();
    await t.start(0).promise;
    const a = t.loop.run();
    const b = t.loop.run();
    t.loop.wake();
    expect(t.passes()).toBe(1);
    t.gate(0).open();
    expect(await first).toBe(0);
    await t.start(1).promise;
    t.gate(1).open();
    expect(await a).toBe(1);
    expect(await b).toBe(1);
    await t.loop.settled();
    expect(t.passes()).toBe(2);
    expect(t.most()).toBe(1);
  });

  it('join shares the pass under way, and starts one when none is', async () => {
    const t = heldLoop();
    const first = t.loop.run();
    await t.start(0).promise;
    const joined = t.loop.join();
    t.gate(0).open();
    expect(await joined).toBe(0);
    expect(await first).toBe(0);
    const next = t.loop.join();
    t.gate(1).open();
    expect(await next).toBe(1);
  });

  it('sets its timer from `next`, told the result and the clock of the context', async () => {
    const clock = new TestClock(Date.UTC(2026, 0, 1, 12));
    const seen: [number | undefined, number][] = [];
    const t = heldLoop(clock, {
      next: (r, now) => {
        seen.push([r, now.getTime()]);
        return r === 0 ? 0 : null; // after the first pass, another at once; then only when woken
      },
      first: 0,
    });
    t.loop.start();
    await t.start(0).promise;
    clock.advance(1000);
    t.gate(0).open();
    // The timer (0 ms) runs the second pass: no one asked for it.
    await t.start(1).promise;
    t.gate(1).open();
    await t.loop.settled();
    expect(seen).toEqual([
      [0, Date.UTC(2026, 0, 1, 12) + 1000],
      [1, Date.UTC(2026, 0, 1, 12) + 1000],
    ]);
    await t.loop.stop();
  });

  it('a failed pass rejects its callers and the loop goes on', async () => {
    const ctx = { log: createLogger('silent'), clock: new TestClock() } as unknown as Ctx;
    const results: (string | undefined)[] = [];
    let n = 0;
    const loop = new ActorLoop<string>(ctx, {
      name: 'failing',
      pass: async () => {
        if (n++ === 0) throw new Error('database down');
        return 'ok';
      },
      next: (r) => {
        results.push(r);
        return null;
      },
      first: null,
    });
    await expect(loop.run()).rejects.toThrow('database down');
    expect(await loop.run()).toBe('ok');
    await loop.settled();
    expect(results).toEqual([undefined, 'ok']);
  });

  it('stop aborts and waits for the pass under way; nothing runs after it', async () => {
    const t = heldLoop();
    const first = t.loop.run();
    await t.start(0).promise;
    const queued = t.loop.run();
    // When the stop resolves, the pass it waited for has ended.
    const stopping = t.loop.stop().then(() => t.ended());
    expect(t.signals[0]?.aborted).toBe(true);
    t.gate(0).open();
    expect(await stopping).toBe(1);
    expect(await first).toBe(0);
    // The pass asked for before the stop never starts.
    await expect(queued).rejects.toThrow('stopped');
    await expect(t.loop.run()).rejects.toThrow('stopped');
    t.loop.wake();
    t.loop.wakeIn(0);
    expect(t.loop.busy).toBe(false);
    expect(t.passes()).toBe(1);
  });
});
