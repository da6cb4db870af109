// The database's health as this node sees it (DECISIONS.md "Reliability promises"): a probe on a
// connection of its own, so a pool full of stuck or dead connections cannot make /readyz hang,
// and a monitor that tells the request deadline whether the database is the reason for a wait.
import postgres, { type Sql } from 'postgres';
import { reconnectBackoff } from './db.js';

export interface DbHealthOptions {
  /** A probe that does not answer within this time counts as a lost database. */
  timeoutMs: number;
  /** How often the monitor probes (0: only when asked). */
  intervalMs: number;
}

export class DbHealth {
  private up = true;
  private probing: Promise<boolean> | null = null;
  private probeStarted = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly probe: Sql,
    private readonly opts: DbHealthOptions,
    private readonly ownsProbe: boolean,
  ) {
    if (opts.intervalMs > 0) {
      this.timer = setInterval(() => void this.check(), opts.intervalMs);
      this.timer.unref();
    }
  }

  /** A client of its own for the probe (real PostgreSQL): one connection, a short connect timeout. */
  static forPostgres(url: string, opts: DbHealthOptions): DbHealth {
    const connectS = Math.max(1, Math.ceil(opts.timeoutMs / 1000));
    const sql = postgres(url, { max: 1, connect_timeout: connectS, backoff: reconnectBackoff, onnotice: () => {} });
    return new DbHealth(sql, opts, true);
  }

  /** Probes now (sharing a probe already under way); false when it fails or outlasts the timeout. */
  check(): Promise<boolean> {
    if (!this.probing) {
      this.probeStarted = Date.now();
      this.probing = this.run().finally(() => {
        this.probing = null;
      });
    }
    const probing = this.probing;
    return new Promise<boolean>((ok) => {
      const timer = setTimeout(() => {
        this.up = false;
        ok(false);
      }, this.opts.timeoutMs);
      void probing.then((r) => {
        clearTimeout(timer);
        ok(r);
      });
    });
  }

  /** True while the database is known unreachable or a probe is stuck past its timeout. */
  suspect(): boolean {
    return !this.up || (this.probing !== null && Date.now() - this.probeStarted > this.opts.timeoutMs);
  }

  get isUp(): boolean {
    return !this.suspect();
  }

  private async run(): Promise<boolean> {
    try {
      await this.probe`SELECT 1`;
      this.up = true;
    } catch {
      this.up = false;
    }
    return this.up;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.ownsProbe) await this.probe.end({ timeout: 1 });
  }
}
