// The Nostr publisher (DESIGN.md "Actors"): each emission's signed events go to every relay in
// NOSTR_RELAYS with retry (exponential backoff). Owned by the scheduler and never awaited by the
// tick: a dead or hanging relay costs only its own timeouts.
import { AbstractRelay } from 'nostr-tools/abstract-relay';
import { type NostrEvent, verifyEvent } from 'nostr-tools/pure';
import WebSocket from 'ws';
import type { Ctx } from '../../domain/ports.js';

export const RELAY_TRIES = 4;

/**
 * nostr-tools drops its `onerror` handler before closing a socket that is still connecting (a
 * hanging relay); `ws` then emits 'error' with no listener, which would crash the process. A
 * permanent listener keeps such errors where they belong: in the failed attempt.
 */
class GuardedWebSocket extends WebSocket {
  constructor(url: string | URL, protocols?: string | string[]) {
    super(url, protocols);
    this.on('error', () => {});
  }
}

export interface PublisherOptions {
  backoffBaseMs: number;
  timeoutMs: number;
}

export class NostrPublisher {
  private readonly running = new Set<Promise<void>>();
  private readonly open = new Set<AbstractRelay>();
  private readonly sleeps = new Map<NodeJS.Timeout, () => void>();
  private stopped = false;

  constructor(
    private readonly ctx: Ctx,
    private readonly opts: PublisherOptions,
  ) {}

  /** Starts publishing to every configured relay and returns at once. */
  publish(events: NostrEvent[]): void {
    for (const url of this.ctx.config.nostrRelays) {
      const p = this.toRelay(url, events).catch((err: unknown) => this.ctx.log.warn({ err, relay: url }, 'nostr publish failed'));
      this.running.add(p);
      void p.finally(() => this.running.delete(p));
    }
  }

  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const [t, wake] of this.sleeps) {
      clearTimeout(t);
      wake();
    }
    for (const r of this.open) r.close();
    await this.idle();
  }

  private async toRelay(url: string, events: NostrEvent[]): Promise<void> {
    const pending = new Map(events.map((e) => [e.id, e]));
    for (let attempt = 1; attempt <= RELAY_TRIES && pending.size > 0 && !this.stopped; attempt++) {
      if (attempt > 1) await this.sleep(this.opts.backoffBaseMs * 2 ** (attempt - 2));
      if (this.stopped) return;
      const relay = new AbstractRelay(url, {
        verifyEvent,
        websocketImplementation: GuardedWebSocket as unknown as typeof globalThis.WebSocket,
        enableReconnect: false,
        enablePing: false,
      });
      relay.publishTimeout = this.opts.timeoutMs;
      this.open.add(relay);
      try {
        await relay.connect({ timeout: this.opts.timeoutMs });
        for (const ev of [...pending.values()]) {
          await relay.publish(ev);
          pending.delete(ev.id);
        }
      } catch (err) {
        this.ctx.log.debug({ err: String(err), relay: url, attempt }, 'nostr relay attempt failed');
      } finally {
        this.open.delete(relay);
        relay.close();
      }
    }
    if (pending.size > 0 && !this.stopped) this.ctx.log.warn({ relay: url }, `nostr relay refused after ${RELAY_TRIES} tries`);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((ok) => {
      const t = setTimeout(() => {
        this.sleeps.delete(t);
        ok();
      }, ms);
      this.sleeps.set(t, ok);
    });
  }
}
