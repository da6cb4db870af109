// A real `ws` client for the stream protocol: JSON or MessagePack, frames queued in order,
// request/answer by ref, and the close code.
import { randomUUID } from 'node:crypto';
import { pack, unpack } from 'msgpackr';
import WebSocket from 'ws';
import { gateFrame } from './stream-gate.js';

// biome-ignore lint/suspicious/noExplicitAny: test frames are arbitrary objects.
export type Frame = Record<string, any>;

export interface StreamOpts {
  msgpack?: boolean;
  token?: string;
  headers?: Record<string, string>;
  protocols?: string[];
}

let refs = 0;

export class StreamClient {
  readonly frames: Frame[] = [];
  private waiters: (() => void)[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  hello!: Frame;

  private constructor(
    readonly ws: WebSocket,
    readonly msgpack: boolean,
  ) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const frame = isBinary ? (unpack(data) as Frame) : (JSON.parse(data.toString('utf8')) as Frame);
      // Every frame is checked against the AsyncAPI document (test/helpers/stream-gate.ts).
      gateFrame(frame);
      this.frames.push(frame);
      for (const w of this.waiters.splice(0)) w();
    });
    this.closed = new Promise((ok) => ws.on('close', (code, reason) => ok({ code, reason: reason.toString() })));
  }

  static async open(httpUrl: string, o: StreamOpts = {}): Promise<StreamClient> {
    return StreamClient.connect(`${httpUrl.replace(/^http/, 'ws')}/api/v1/stream`, o);
  }

  /** Opens the stream at a ws:// URL as given, e.g. the one a document names. */
  static async connect(wsUrl: string, o: StreamOpts = {}): Promise<StreamClient> {
    const protocols = o.protocols ?? (o.msgpack ? ['commons.msgpack.v1'] : []);
    const headers = { ...(o.headers ?? {}), ...(o.token ? { authorization: `Bearer ${o.token}` } : {}) };
    const ws = new WebSocket(wsUrl, protocols, { headers });
    const c = new StreamClient(ws, Boolean(o.msgpack));
    await new Promise<void>((ok, ko) => {
      ws.once('open', () => ok());
      ws.once('error', ko);
      ws.once('unexpected-response', (_req, res) => ko(new Error(`upgrade refused: ${res.statusCode}`)));
    });
    c.hello = await c.next((f) => f.op === 'hello');
    return c;
  }

  send(frame: Frame): void {
    this.ws.send(this.msgpack ? pack(frame) : JSON.stringify(frame));
  }

  /** The first queued frame matching `pred`, removed from the queue (waits up to timeoutMs). */
  async next(pred: (f: Frame) => boolean = () => true, timeoutMs = 5000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.frames.findIndex(pred);
      if (i >= 0) return this.frames.splice(i, 1)[0] as Frame;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching frame within ${timeoutMs} ms; queued: ${JSON.stringify(this.frames).slice(0, 500)}`);
      await new Promise<void>((ok) => {
        const t = setTimeout(ok, left);
        this.waiters.push(() => {
          clearTimeout(t);
          ok();
        });
      });
    }
  }

  /** Sends an op with a fresh ref and returns the ack or error answering it. */
  async request(op: string, fields: Frame = {}, timeoutMs = 5000): Promise<Frame> {
    const ref = `r${++refs}`;
    this.send({ op, ref, ...fields });
    return this.next((f) => (f.op === 'ack' || f.op === 'error' || f.op === 'pong') && f.ref === ref, timeoutMs);
  }

  events(topic: string): Frame[] {
    return this.frames.filter((f) => f.op === 'event' && f.topic === topic);
  }

  close(): void {
    this.ws.close();
  }
}

/** A `posts` event payload of the documented shape (src/transport/ws/payloads.ts), for tests that
 * publish on the bus directly; `fields` replace its defaults. */
export function samplePost(fields: Frame = {}): Frame {
  return {
    kind: 'post',
    id: randomUUID(),
    post_type: 'discussion',
    title: 'a post',
    body: 'its body',
    author: { registration_number: 'AI-00000001', name: 'Poster' },
    created_at: new Date().toISOString(),
    comments_count: 0,
    content_trust: 'untrusted_user_content',
    ...fields,
  };
}

/** With REDIS_URL set, servers use the Redis bus under a random prefix so runs never collide. */
export function busEnv(): Record<string, string> {
  const url = process.env.REDIS_URL;
  if (!url) return {};
  return { REDIS_URL: url, REDIS_PREFIX: `t${Math.random().toString(36).slice(2, 10)}:` };
}
