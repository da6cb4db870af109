// Follows one topic of the stream (/api/v1/stream, DECISIONS.md "Real-time stream") across drops:
// after a close it reconnects with backoff and subscribes with `since` = the id of the last event
// shown, so the service replays what was missed; an event at or below that id is never shown
// again. So a follower sees every event once, in order, whatever the connection does.
import WebSocket from 'ws';
import { Refused, Unreachable } from './errors.js';
import { sleep } from './sleep.js';
import type { WireError } from './wire.js';

export interface FollowOpts {
  server: string;
  token?: string | undefined;
  topic: string;
  /** The id of the last event already shown (from the REST page read first). */
  since?: string | undefined;
  onEvent(id: string, data: unknown): void;
  note(line: string): void;
  stop: AbortSignal;
  /** Called after a resubscription that had no cursor to give (no event seen yet): fill the gap over REST. */
  refill?: () => Promise<void>;
}

const PING_MS = 30_000;
const MAX_DELAY_MS = 5_000;

type Frame = { op: string; ref?: unknown; topic?: string; id?: string; data?: unknown; error?: WireError; too_large?: boolean };

export const streamUrl = (server: string): string => `${server.replace(/\/+$/, '').replace(/^http/, 'ws')}/api/v1/stream`;

export async function follow(o: FollowOpts): Promise<void> {
  let cursor = o.since;
  let subscribedOnce = false;
  let delay = 200;
  while (!o.stop.aborted) {
    const r = await session(o, cursor, (id) => {
      cursor = id;
    });
    if (r.subscribed) {
      subscribedOnce = true;
      delay = 200;
    }
    if (o.stop.aborted) return;
    if (!subscribedOnce) throw new Unreachable(`cannot follow ${o.topic} at ${streamUrl(o.server)}: ${r.why}`);
    o.note(`stream: ${r.why}; reconnecting in ${delay} ms (since ${cursor ?? 'none'})`);
    await sleep(delay, o.stop);
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  }
}

/** One connection: resolves when it closes (why, and whether the subscription was acknowledged). */
function session(o: FollowOpts, since: string | undefined, advance: (id: string) => void): Promise<{ subscribed: boolean; why: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'user-agent': 'commons-cli' };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    const ws = new WebSocket(streamUrl(o.server), { headers, handshakeTimeout: 10_000 });
    let cursor = since;
    let subscribed = false;
    let alive = true;
    let settled = false;
    const ping = setInterval(() => {
      if (!alive) return ws.terminate();
      alive = false;
      ws.ping();
    }, PING_MS);
    const stop = () => ws.close(1000);
    o.stop.addEventListener('abort', stop, { once: true });
    const done = (why: string, err?: Error) => {
      if (settled) return;
      settled = true;
      clearInterval(ping);
      o.stop.removeEventListener('abort', stop);
      if (err) reject(err);
      else resolve({ subscribed, why });
    };
    ws.on('pong', () => {
      alive = true;
    });
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (b: Buffer) => {
        text += b.toString('utf8');
      });
      res.on('end', () => {
        let body: { error?: WireError } | undefined;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        if (body?.error && res.statusCode && res.statusCode < 500) done('refused', new Refused(res.statusCode, body.error, body));
        else done(`upgrade answered ${res.statusCode}`);
        ws.terminate();
      });
    });
    ws.on('error', (e) => done((e as { code?: string }).code ?? e.message));
    ws.on('close', (code) => done(`closed (${code})`));
    ws.on('message', (raw: Buffer) => {
      let f: Frame;
      try {
        f = JSON.parse(raw.toString('utf8')) as Frame;
      } catch {
        return;
      }
      if (f.op === 'hello') {
        ws.send(JSON.stringify({ op: 'subscribe', ref: 'follow', topic: o.topic, ...(cursor !== undefined ? { since: cursor } : {}) }));
      } else if (f.op === 'error' && f.ref === 'follow' && f.error) {
        done('refused', new Refused(400, f.error, f));
        ws.close(1000);
      } else if (f.op === 'ack' && f.ref === 'follow') {
        subscribed = true;
        o.note(`stream: following ${o.topic}${cursor !== undefined ? ` after ${cursor}` : ''}`);
        if (cursor === undefined && o.refill) o.refill().catch((e) => o.note(`stream: could not fill the gap: ${(e as Error).message}`));
      } else if (f.op === 'event' && f.topic === o.topic && typeof f.id === 'string') {
        if (cursor !== undefined && BigInt(f.id) <= BigInt(cursor)) return;
        cursor = f.id;
        advance(f.id);
        if (f.too_large) o.note(`stream: event ${f.id} is too large for a frame; read it over REST`);
        else o.onEvent(f.id, f.data);
      }
    });
  });
}
