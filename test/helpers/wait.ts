// Waiting for a condition instead of sleeping: the one polling loop every test uses.

/** Polls until `check` is true (real time), failing after `ms` with what was awaited. */
export async function waitFor(check: () => boolean | Promise<boolean>, ms = 10_000, what = 'condition'): Promise<void> {
  // performance.now(): a test may stand the Date clock still.
  const end = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((ok) => setTimeout(ok, 10));
  }
}
