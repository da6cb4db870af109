// Group commit (DESIGN.md "Writes are grouped, answers wait for durability"): concurrent writes of
// one kind are committed together in one transaction, in the order they were submitted, and each
// submitter is answered only when that transaction has committed.
//
// Adaptive: a write submitted while nothing is committing starts a commit at once (no added delay
// when idle); writes submitted while a commit is in flight wait for it and then all go in the next
// one. So under load a batch is whatever arrived during one commit's round trip, and the number of
// commits per second stays what the database does for one writer.
//
// A batch that fails is retried one write per transaction, so one bad write fails alone and its
// neighbours still commit (in their original order); unless the failure is the database's, not a
// write's (an outage, a lock or statement deadline: `together`), when every write of the batch,
// and every write queued behind it, fails at once, so none waits out the deadline a second time.

export type CommitFn<I, O> = (batch: I[]) => Promise<O[]>;

interface Pending<I, O> {
  input: I;
  ok: (o: O) => void;
  ko: (err: unknown) => void;
}

export class GroupCommit<I, O> {
  private queue: Pending<I, O>[] = [];
  private running = false;
  /** Commits made and writes committed: writes / commits is the grouping achieved. */
  commits = 0;
  writes = 0;

  constructor(
    private readonly commit: CommitFn<I, O>,
    private readonly maxBatch = 500,
    /** Told how long each commit took, in seconds (a metric). */
    private readonly timed: (seconds: number) => void = () => {},
    /** True for a failure that is the database's, not one write's: the batch fails together. */
    private readonly together: (err: unknown) => boolean = () => false,
  ) {}

  submit(input: I): Promise<O> {
    return new Promise<O>((ok, ko) => {
      this.queue.push({ input, ok, ko });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const t = performance.now();
          const out = await this.commit(batch.map((p) => p.input));
          this.timed((performance.now() - t) / 1000);
          if (out.length !== batch.length) throw new Error(`group commit returned ${out.length} results for ${batch.length} writes`);
          this.count(batch.length);
          for (let i = 0; i < batch.length; i++) (batch[i] as Pending<I, O>).ok(out[i] as O);
        } catch (err) {
          if (this.together(err)) {
            // The writes that queued meanwhile would meet the same database: they fail now too
            // (not applied; the caller answers 503 with Retry-After) instead of each waiting out
            // another deadline behind this one.
            for (const p of [...batch, ...this.queue.splice(0)]) p.ko(err);
          } else if (batch.length === 1) (batch[0] as Pending<I, O>).ko(err);
          else await this.oneByOne(batch);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async oneByOne(batch: Pending<I, O>[]): Promise<void> {
    for (const p of batch) {
      try {
        const [o] = await this.commit([p.input]);
        this.count(1);
        p.ok(o as O);
      } catch (err) {
        p.ko(err);
      }
    }
  }

  private count(writes: number): void {
    this.commits++;
    this.writes += writes;
  }
}
