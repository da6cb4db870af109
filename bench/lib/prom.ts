// Reads a histogram from a Commons server's /metrics (the bench runs on 127.0.0.1, where it is
// open) and estimates quantiles of what was observed between two readings, from the bucket counts
// (the upper bound of the bucket the quantile falls in, as Prometheus' histogram_quantile would
// bound it).

export type Buckets = Map<number, number>;

export async function readHistogram(port: number, name: string): Promise<Buckets> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const out: Buckets = new Map();
  const re = new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)`, 'gm');
  for (const m of text.matchAll(re)) out.set(m[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[1]), Number(m[2]));
  return out;
}

/** The q-quantile (0..1) in milliseconds of the observations between `before` and `after`; null when none. */
export function quantileMs(before: Buckets, after: Buckets, q: number): number | null {
  const les = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Number.POSITIVE_INFINITY) ?? 0) - (before.get(Number.POSITIVE_INFINITY) ?? 0);
  if (total <= 0) return null;
  for (const le of les) {
    const n = (after.get(le) ?? 0) - (before.get(le) ?? 0);
    if (n >= q * total) return le === Number.POSITIVE_INFINITY ? Number.POSITIVE_INFINITY : le * 1000;
  }
  return null;
}
