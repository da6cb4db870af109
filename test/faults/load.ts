// A steady mixed load for the fault tests: writers each cycle through a chat post, a memory write,
// a heartbeat and a task post (which escrows credits), every answer timed and kept, and a
// /readyz poller. What was acknowledged is checked against the database afterwards.
import { call } from '../helpers/server.js';

export interface Answered {
  op: string;
  status: number;
  ms: number;
  at: number;
  retryAfter: string | null;
  code: string | null;
  /** What an acknowledged write left behind, to be found in the database afterwards. */
  mark?: string;
}

export interface Writer {
  token: string;
  id: number;
}

/** A request that got no answer within this time is recorded with status 0. */
const GIVE_UP_MS = 15_000;

async function timed(base: string, op: string, method: string, path: string, token: string, body?: unknown): Promise<Answered> {
  const at = Date.now();
  try {
    const r = await Promise.race([
      call(base, method, path, { token, ...(body !== undefined ? { body } : {}) }),
      new Promise<null>((ok) => setTimeout(() => ok(null), GIVE_UP_MS)),
    ]);
    if (!r) return { op, status: 0, ms: Date.now() - at, at, retryAfter: null, code: 'NO_ANSWER' };
    return { op, status: r.status, ms: Date.now() - at, at, retryAfter: r.headers.get('retry-after'), code: r.json?.error?.code ?? null };
  } catch (err) {
    return { op, status: -1, ms: Date.now() - at, at, retryAfter: null, code: String((err as Error).message) };
  }
}

export class MixedLoad {
  readonly answers: Answered[] = [];
  /** /readyz answers: when asked, and when the answer came. */
  readonly ready: { at: number; answeredAt: number; status: number }[] = [];
  private running = true;
  private loops: Promise<void>[] = [];
  private seq = 0;

  constructor(
    private readonly base: string,
    private readonly writers: Writer[],
  ) {}

  start(): void {
    this.loops = this.writers.map((w, i) => this.writerLoop(w, i));
    this.loops.push(this.readyLoop());
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async writerLoop(w: Writer, i: number): Promise<void> {
    const kinds = ['chat', 'memory', 'heartbeat', 'task'] as const;
    for (let n = 0; this.running; n++) {
      const kind = kinds[(n + i) % kinds.length] as (typeof kinds)[number];
      const seq = ++this.seq;
      const tag = `w${i}-${seq}`;
      let a: Answered;
      if (kind === 'chat') a = await timed(this.base, kind, 'POST', '/api/v1/chat', w.token, { body: `fault load ${tag}` });
      // Keys cycle (an AI holds at most 200); the value is the write's sequence number.
      else if (kind === 'memory') a = await timed(this.base, kind, 'POST', '/api/v1/memory', w.token, { key: `k${n % 100}`, value: seq });
      else if (kind === 'heartbeat') a = await timed(this.base, kind, 'POST', '/api/v1/habitat/heartbeat', w.token, { status_note: tag });
      else
        a = await timed(this.base, kind, 'POST', '/api/v1/habitat/tasks', w.token, {
          title: `Task ${tag}`,
          body: 'Fault load.',
          reward_points: 1,
        });
      if (a.status === 200) a.mark = kind === 'memory' ? `${w.id}|k${n % 100}|${seq}` : tag;
      this.answers.push(a);
      // A client that got 503 waits as Retry-After asks (bounded here so the outage stays loaded).
      if (a.status === 503) await new Promise((ok) => setTimeout(ok, 100));
    }
  }

  private async readyLoop(): Promise<void> {
    while (this.running) {
      const at = Date.now();
      const r = await timed(this.base, 'readyz', 'GET', '/readyz', '');
      this.ready.push({ at, answeredAt: at + r.ms, status: r.status });
      await new Promise((ok) => setTimeout(ok, 100));
    }
  }

  byStatus(from = 0, to = Number.POSITIVE_INFINITY): Record<string, number> {
    const out: Record<string, number> = {};
    for (const a of this.answers) if (a.at >= from && a.at <= to) out[a.status] = (out[a.status] ?? 0) + 1;
    return out;
  }

  acknowledged(op: string): string[] {
    return this.answers.filter((a) => a.op === op && a.status === 200 && a.mark).map((a) => a.mark as string);
  }
}
