// The read policy's own fixed-window counter (src/transport/admission/limits/window-counter.ts): the
// lean read path counts in it synchronously and the general path through the promise face that
// rate-limiter-flexible's limiters have, with RateLimiterMemory's semantics (a window starts at a
// key's first point; a point past the budget is refused with the state, not an Error; a block
// spends the key for a whole window from now). A clock of the test's own: no waiting.
import { expect, it } from 'vitest';
import { WindowCounter } from '../../src/transport/admission/limits/window-counter.js';

function counter(points: number, durationS: number) {
  const clock = { now: 1_000_000 };
  return { c: new WindowCounter(points, durationS, () => clock.now), clock };
}

it('counts points in a window that starts at the first and ends durationS later', () => {
  const { c, clock } = counter(3, 60);
  expect(c.take('a')).toMatchObject({ consumedPoints: 1, remainingPoints: 2, msBeforeNext: 60_000, isFirstInDuration: true });
  clock.now += 10_000;
  expect(c.take('a')).toMatchObject({ consumedPoints: 2, remainingPoints: 1, msBeforeNext: 50_000, isFirstInDuration: false });
  expect(c.take('b')).toMatchObject({ consumedPoints: 1, msBeforeNext: 60_000 });
  clock.now += 50_000;
  // The window ended: a new one starts.
  expect(c.take('a')).toMatchObject({ consumedPoints: 1, msBeforeNext: 60_000, isFirstInDuration: true });
});

it('consume resolves within the budget and rejects past it with the state (not an Error)', async () => {
  const { c } = counter(2, 60);
  await expect(c.consume('k')).resolves.toMatchObject({ remainingPoints: 1 });
  await expect(c.consume('k')).resolves.toMatchObject({ remainingPoints: 0 });
  const refused = await c.consume('k').catch((e: unknown) => e);
  expect(refused).not.toBeInstanceOf(Error);
  expect(refused).toMatchObject({ consumedPoints: 3, remainingPoints: 0 });
});

it('block spends the key for a whole window from now; get reads without counting', async () => {
  const { c, clock } = counter(5, 60);
  expect(await c.get('k')).toBeNull();
  c.take('k');
  clock.now += 30_000;
  await c.block('k', 60);
  expect(await c.get('k')).toMatchObject({ consumedPoints: 6, msBeforeNext: 60_000 });
  clock.now += 59_000;
  await expect(c.consume('k')).rejects.toMatchObject({ remainingPoints: 0 });
  clock.now += 1_000;
  expect(await c.get('k')).toBeNull();
  await expect(c.consume('k')).resolves.toMatchObject({ consumedPoints: 1 });
});

it('drops expired windows as new ones open (memory stays bounded)', () => {
  const { c, clock } = counter(1, 1);
  for (let i = 0; i < 5000; i++) c.take(`old${i}`);
  clock.now += 1_000;
  for (let i = 0; i < 5000; i++) c.take(`new${i}`);
  const size = (c as unknown as { windows: Map<string, unknown> }).windows.size;
  expect(size).toBeLessThan(10_000);
});
