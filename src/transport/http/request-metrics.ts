// The request counter and latency histogram, kept in plain numbers per (method, route, status)
// and handed to prom-client's registry at scrape time. prom-client's own `labels(...).observe()`
// and `.inc()` hash and validate the labels on every call: measured on the lean read path, the two
// cost 2.0-2.7 us per request, more than the read's own work (BENCHMARKS.md, reads). Here a request
// costs a bucket search over 12 bounds and four additions. The text is what prom-client writes
// for its Counter and Histogram (the registry formats both; test/e2e/metrics.test.ts reads it).
import type { Registry } from 'prom-client';

export interface RequestObserver {
  observe(seconds: number): void;
}

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] as const;

interface Latency {
  labels: { method: string; route: string };
  /** Observations per bucket (not cumulative); the last slot is above the highest bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

interface Answered {
  labels: { method: string; route: string; status: string };
  count: number;
}

interface Value {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName?: string;
}

/** What prom-client's registry asks of a metric (`registerMetric`, `getMetricsAsString`). */
interface Collected {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  getForPromString(): Promise<Snapshot>;
  /** The same with each value's labels in one object (prom-client's JSON form). */
  get(): Promise<Snapshot>;
}

interface Snapshot {
  name: string;
  help: string;
  type: string;
  values: Value[];
  aggregator: 'sum';
}

export class RequestMetrics {
  private readonly latency = new Map<string, Latency>();
  private readonly answered = new Map<string, Answered>();
  private readonly children = new Map<string, RequestObserver>();

  constructor(registry: Registry) {
    const requests = 'commons_http_requests_total';
    const duration = 'commons_http_request_duration_seconds';
    registry.registerMetric(
      this.metric(requests, 'HTTP requests answered, by route pattern and status', 'counter', () =>
        [...this.answered.values()].filter((a) => a.count > 0).map((a) => ({ labels: a.labels, value: a.count })),
      ) as never,
    );
    registry.registerMetric(
      this.metric(duration, 'Time from the parsed request to the answer, by route pattern', 'histogram', () =>
        [...this.latency.values()].filter((l) => l.count > 0).flatMap((l) => histogramValues(duration, l)),
      ) as never,
    );
  }

  /** The observer of one (method, route, status), to keep on a hot path: bounded by the route table. */
  child(method: string, route: string, status: number): RequestObserver {
    const key = `${method} ${route} ${status}`;
    let c = this.children.get(key);
    if (c) return c;
    const a: Answered = { labels: { method, route, status: String(status) }, count: 0 };
    this.answered.set(key, a);
    const lkey = `${method} ${route}`;
    let l = this.latency.get(lkey);
    if (!l) {
      l = { labels: { method, route }, counts: new Float64Array(BUCKETS.length + 1), sum: 0, count: 0 };
      this.latency.set(lkey, l);
    }
    const time = l;
    c = {
      observe(seconds: number): void {
        a.count++;
        let i = 0;
        while (i < BUCKETS.length && seconds > (BUCKETS[i] as number)) i++;
        (time.counts[i] as number)++;
        time.sum += seconds;
        time.count++;
      },
    };
    this.children.set(key, c);
    return c;
  }

  private metric(name: string, help: string, type: Collected['type'], values: () => Value[]): Collected {
    const snapshot = (): Snapshot => ({ name, help, type, values: values(), aggregator: 'sum' });
    return {
      name,
      help,
      type,
      aggregator: 'sum',
      getForPromString: async () => snapshot(),
      get: async () => {
        const s = snapshot();
        return { ...s, values: s.values.map(({ sharedLabels, ...v }) => ({ ...v, labels: { ...v.labels, ...sharedLabels } })) };
      },
    };
  }
}

function histogramValues(name: string, l: Latency): Value[] {
  const out: Value[] = [];
  let acc = 0;
  BUCKETS.forEach((le, i) => {
    acc += l.counts[i] as number;
    out.push({ labels: { le }, sharedLabels: l.labels, value: acc, metricName: `${name}_bucket` });
  });
  out.push({ labels: { le: '+Inf' }, sharedLabels: l.labels, value: l.count, metricName: `${name}_bucket` });
  out.push({ labels: {}, sharedLabels: l.labels, value: l.sum, metricName: `${name}_sum` });
  out.push({ labels: {}, sharedLabels: l.labels, value: l.count, metricName: `${name}_count` });
  return out;
}
