/** Waits `ms`, or less when `stop` aborts first (a following command ends at once on SIGINT). */
export function sleep(ms: number, stop: AbortSignal): Promise<void> {
  return new Promise<void>((ok) => {
    const done = () => {
      clearTimeout(t);
      ok();
    };
    const t = setTimeout(() => {
      stop.removeEventListener('abort', done);
      ok();
    }, ms);
    stop.addEventListener('abort', done, { once: true });
  });
}
