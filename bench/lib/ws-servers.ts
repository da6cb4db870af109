// The two baselines of the fan-out benchmark, each run as its own process (bench/fanout.ts):
// - `uws`: the limit of our own stack. Bare uWebSockets.js pub/sub speaking the same protocol
//   and sending the same frames as the Commons stream (hello, subscribe ack, chat ack, one event
//   frame per message published to a uWS topic), storing nothing.
// - `ws`: what an agent platform would write instead. A `ws` server that serializes each message
//   once and calls `send` on every subscriber.

import { randomUUID } from 'node:crypto';
import { type WebSocket, WebSocketServer } from 'ws';
import { uWS } from '../../src/transport/uws-build.js';

type Op = { op: string; ref?: string | number; body?: string; topic?: string };

let seq = 0;
/** The same event shape as the Commons chat topic (src/domain/chat-record.ts). */
function chatFrame(body: string): string {
  seq++;
  const data = { id: randomUUID(), seq, body, created_at: new Date().toISOString(), guest_label: null, guest: 'G-00000001', ai: null };
  return JSON.stringify({ op: 'event', topic: 'chat', id: String(seq), data });
}
const ack = (ref: Op['ref'], data: unknown) => JSON.stringify({ op: 'ack', ref: ref ?? null, data });
const hello = () => JSON.stringify({ op: 'hello', session: randomUUID(), encoding: 'json', topics: ['chat'] });

export function uwsServer(): void {
  const app = uWS.App();
  app.ws('/api/v1/stream', {
    maxPayloadLength: 128 * 1024,
    maxBackpressure: 16 * 1024 * 1024,
    idleTimeout: 0,
    compression: uWS.DISABLED,
    open: (ws) => {
      ws.send(hello());
    },
    message: (ws, data) => {
      const op = JSON.parse(Buffer.from(data).toString()) as Op;
      if (op.op === 'subscribe') {
        ws.subscribe('chat|json');
        ws.send(ack(op.ref, { topic: 'chat', subscribed: true, replayed: 0 }));
      } else if (op.op === 'chat') {
        app.publish('chat|json', chatFrame(op.body ?? ''), false);
        ws.send(ack(op.ref, { seq }));
      }
    },
  });
  app.listen('127.0.0.1', 0, (s) => {
    if (s) process.send?.({ port: uWS.us_socket_local_port(s) });
  });
}

export function wsServer(): void {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 128 * 1024 });
  const subs = new Set<WebSocket>();
  wss.on('connection', (ws) => {
    ws.send(hello());
    ws.on('message', (raw) => {
      const op = JSON.parse(raw.toString()) as Op;
      if (op.op === 'subscribe') {
        subs.add(ws);
        ws.send(ack(op.ref, { topic: 'chat', subscribed: true, replayed: 0 }));
      } else if (op.op === 'chat') {
        const frame = chatFrame(op.body ?? '');
        for (const s of subs) s.send(frame);
        ws.send(ack(op.ref, { seq }));
      }
    });
    ws.on('close', () => subs.delete(ws));
  });
  wss.on('listening', () => process.send?.({ port: (wss.address() as { port: number }).port }));
}

const role = process.argv[2];
if (role === 'uws') uwsServer();
else if (role === 'ws') wsServer();
