// Our own fixed-window counter, for the read policy when the counters live in this process: the
// lean read path (src/transport/http/fast-read.ts) counts a read synchronously (`take`), and the
// general path counts against the same windows through the asynchronous face
// rate-limiter-flexible's limiters have (`consume`, `block`, `get`, `penalty`), with the same
// semantics as its RateLimiterMemory: a window starts at a key's first point and lasts
// `durationS`; a point past `points` is refused (the promise rejects with the state, not an Error).

/** The state of a key after a call (the fields of rate-limiter-flexible's RateLimiterRes we read). */
export interface WindowState {
  consumedPoints: number;
  remainingPoints: number;
  msBeforeNext: number;
  isFirstInDuration: boolean;
}

interface Window {
  points: number;
  endsAt: number;
}

/** Expired windows are dropped once this many have been opened since the last sweep. */
const SWEEP_EVERY = 4096;

export class WindowCounter {
  private readonly windows = new Map<string, Window>();
  private opened = 0;

  constructor(
    readonly points: number,
    readonly durationS: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Adds `points` to the key's window (a new window when none is open); the state after it. */
  take(key: string, points = 1): WindowState {
    const now = this.now();
    let w = this.windows.get(key);
    const first = !w || w.endsAt <= now;
    if (first) {
      w = { points: 0, endsAt: now + this.durationS * 1000 };
      this.windows.set(key, w);
      if (++this.opened >= SWEEP_EVERY) this.sweep(now);
    }
    (w as Window).points += points;
    return this.state(w as Window, now, first);
  }

  consume(key: string, points = 1): Promise<WindowState> {
    const s = this.take(key, points);
    return s.consumedPoints > this.points ? Promise.reject(s) : Promise.resolve(s);
  }

  /** Spends the key for `seconds` from now (a refused caller's whole window). */
  block(key: string, seconds: number): Promise<WindowState> {
    const now = this.now();
    const w = { points: this.points + 1, endsAt: now + seconds * 1000 };
    this.windows.set(key, w);
    return Promise.resolve(this.state(w, now, true));
  }

  get(key: string): Promise<WindowState | null> {
    const now = this.now();
    const w = this.windows.get(key);
    return Promise.resolve(w && w.endsAt > now ? this.state(w, now, false) : null);
  }

  penalty(key: string, points = 1): Promise<WindowState> {
    return Promise.resolve(this.take(key, points));
  }

  private state(w: Window, now: number, first: boolean): WindowState {
    return {
      consumedPoints: w.points,
      remainingPoints: Math.max(this.points - w.points, 0),
      msBeforeNext: Math.max(w.endsAt - now, 0),
      isFirstInDuration: first,
    };
  }

  private sweep(now: number): void {
    this.opened = 0;
    for (const [k, w] of this.windows) if (w.endsAt <= now) this.windows.delete(k);
  }
}
