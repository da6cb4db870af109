// Group commit (DESIGN.md "Writes are grouped, answers wait for durability"): concurrent writes of
// one kind are committed together in one transaction, in the order they were submitted, and each
// submitter is answered only when that transaction has committed. The same grouping serves the
// member-token checks of writes (src/domain/identity.ts): reads that must each start after they
// were asked, so none may join a query already in flight.
//
// Adaptive: a write submitted while nothing is committing starts a commit at once (no added delay
// when idle); writes submitted while a commit is in flight wait for it and then all go in the next
// one. So under load a batch is whatever arrived during one commit's round trip, and the number of
// commits per second stays what the database does for one writer. Right after a commit, under
// load, the next batch also waits a little for the writers just answered (`gather`). With more
// than one lane (the chat's on PostgreSQL, CHAT_COMMIT_LANES), a second batch starts while the
// first commits, once at least `minBeside` writes wait and it holds half the writes expected or
// half a commit's time has passed (`gatherBeside`); batches are answered in the order they were taken.
//
// A batch that fails is retried one write per transaction, so one bad write fails alone and its
// neighbours still commit (in their original order); unless the failure is the database's, not a
// write's (an outage, a lock or statement deadline: `together`), when every write of the batch,
// and every write queued behind it, fails at once, so none waits out the deadline a second time.

/** The longest a batch waits for writers to come back under load (see GroupCommit.gather). */
const MAX_GATHER_MS = 2;
/** After a wait that did not pay, how often a batch tries waiting again. */
const PROBE_EVERY = 8;

export type CommitFn<I, O> = (batch: I[]) => Promise<O[]>;

interface Pending<I, O> {
  input: I;
  ok: (o: O) => void;
  ko: (err: unknown) => void;
}

export class GroupCommit<I, O> {
  private queue: Pending<I, O>[] = [];
  /** Batches committing now (at most `lanes`). */
  private running = 0;
  /** Settles when the last batch taken has been answered: batches are answered in the order they
   * were taken, whatever order their commits end in. */
  private answered: Promise<void> = Promise.resolve();
  /** How many writes the next batch expects under load (see gather), how long the last commit
   * took (ms) and when it ended (performance.now()). */
  private expected = 0;
  private lastMs = 0;
  private lastEnd = Number.NEGATIVE_INFINITY;
  /** Set while a batch gathers: starts it at once; called when the queue holds wakeAt writes. */
  private wake: (() => void) | null = null;
  private wakeAt = 0;
  /** Batches left to start without waiting: after a wait that few writers came back to (they
   * were not waiting for their answers to write again), the next PROBE_EVERY - 1 batches do not wait. */
  private skip = 0;
  /** Commits made and writes committed: writes / commits is the grouping achieved. */
  commits = 0;
  writes = 0;
  /** Batches that waited for writers to come back (see gather). */
  waits = 0;

  constructor(
    private readonly commit: CommitFn<I, O>,
    private readonly maxBatch = 500,
    /** Told how long each commit took, in seconds (a metric). */
    private readonly timed: (seconds: number) => void = () => {},
    /** True for a failure that is the database's, not one write's: the batch fails together. */
    private readonly together: (err: unknown) => boolean = () => false,
    /** How many batches may commit at once: with more than one, a write submitted while a batch
     * commits starts the next batch at once; batches may commit in any order (the chat's, whose
     * readers stop at its watermark: src/store/chat.ts), and are answered in the order they were
     * taken (so a node's chat posts are published, and reach its chat room, mostly in seq order). */
    private readonly lanes = 1,
    /** A batch starts beside another only once this many writes wait: fewer go together in the
     * next batch of the lane committing (split across lanes, few writers pay a commit's fixed cost
     * twice as often; many writers still fill both lanes). */
    private readonly minBeside = 1,
    /** How long, as a share of the last commit's time (at most MAX_GATHER_MS), a batch waits under
     * load for the writers just answered (see gather). */
    private readonly gatherShare = 0.5,
    /** With more than one lane, whether batches are answered in the order they were taken (the
     * chat's) or each as soon as it commits (task writes, whose answers need no order: a batch
     * waiting on another transaction's lock then holds back no batch taken after it). */
    private readonly ordered = true,
  ) {}

  submit(input: I): Promise<O> {
    return new Promise<O>((ok, ko) => {
      this.queue.push({ input, ok, ko });
      if (this.wake) {
        if (this.queue.length >= this.wakeAt) this.wake();
      } else if (this.running === 0 || (this.running < this.lanes && this.queue.length >= this.minBeside)) void this.drain();
    });
  }

  /**
   * Under load (the last commit ended less than a commit's time ago), the writers it answered are
   * likely on their way back: the next batch waits until it holds them and those that queued
   * during the commit, or `gatherShare` of a commit's time (half unless told; at most MAX_GATHER_MS),
   * whichever comes first.
   * Otherwise, and when idle, it starts at once; and when a wait did not pay (writers that do not
   * wait for their answers, or come back later than that), the next seven batches do not wait, so
   * such load pays the wait on one batch in eight. Without this, writers that each wait for their
   * answer split into two halves taking turns, each half paying a commit's fixed cost (16 HTTP
   * writers on PostgreSQL: batches of 8; with it, about 15, and 1.4x the posts per second).
   */
  private gather(): Promise<void> | null {
    const now = performance.now();
    const wait = Math.min(this.lastMs * this.gatherShare, MAX_GATHER_MS);
    if (this.queue.length >= this.expected || now - this.lastEnd > this.lastMs || wait < 1) return null;
    if (this.skip > 0) {
      this.skip--;
      return null;
    }
    const before = this.queue.length;
    this.waits++;
    return new Promise<void>((ok) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        // Worth it when at least half of the writers waited for came back in time.
        if (2 * (this.queue.length - before) < this.expected - before) this.skip = PROBE_EVERY - 1;
        ok();
      };
      const timer = setTimeout(done, wait);
      this.wake = done;
      this.wakeAt = this.expected;
    });
  }

  /**
   * With another batch committing (lanes > 1), a batch waits until it holds half the writes the
   * last commit expected, or half a commit's time (at most MAX_GATHER_MS): started at the first
   * write, the lanes would split the writers into batches of one or two, each paying a commit.
   */
  private gatherBeside(): Promise<void> | null {
    const half = Math.ceil(this.expected / 2);
    const wait = Math.min(this.lastMs / 2, MAX_GATHER_MS);
    // One batch gathers at a time: a lane that frees while another gathers takes the queue now.
    if (this.queue.length >= half || wait < 0.5 || this.wake) return null;
    return new Promise<void>((ok) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        ok();
      };
      const timer = setTimeout(done, wait);
      this.wake = done;
      this.wakeAt = half;
    });
  }

  private async drain(): Promise<void> {
    this.running++;
    try {
      while (this.queue.length > 0) {
        // Too few waiting to go beside another batch: the lane committing takes them next.
        if (this.running > 1 && this.queue.length < this.minBeside && !this.wake) break;
        const gathering = this.running === 1 ? this.gather() : this.gatherBeside();
        if (gathering) await gathering;
        const batch = this.queue.splice(0, this.maxBatch);
        // Another lane took what this one gathered.
        if (batch.length === 0) continue;
        const before = this.ordered ? this.answered : Promise.resolve();
        let answered = () => {};
        this.answered = new Promise<void>((ok) => {
          answered = ok;
        });
        try {
          const t = performance.now();
          const out = await this.commit(batch.map((p) => p.input));
          const end = performance.now();
          this.timed((end - t) / 1000);
          // Those still queued, and the writers just answered, who may be back for the next.
          this.expected = Math.min(this.queue.length + batch.length, this.maxBatch);
          this.lastMs = end - t;
          this.lastEnd = end;
          if (out.length !== batch.length) throw new Error(`group commit returned ${out.length} results for ${batch.length} writes`);
          this.count(batch.length);
          // Answered once the batches taken before it are (not awaited: this lane goes on).
          void before.then(() => {
            for (let i = 0; i < batch.length; i++) (batch[i] as Pending<I, O>).ok(out[i] as O);
            answered();
          });
        } catch (err) {
          await before;
          if (this.together(err)) {
            // The writes that queued meanwhile would meet the same database: they fail now too
            // (not applied; the caller answers 503 with Retry-After) instead of each waiting out
            // another deadline behind this one.
            for (const p of [...batch, ...this.queue.splice(0)]) p.ko(err);
          } else if (batch.length === 1) (batch[0] as Pending<I, O>).ko(err);
          else await this.oneByOne(batch);
          answered();
        }
      }
    } finally {
      this.running--;
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
