// The read-only NIP-01 relay at /nostr (DECISIONS.md "Signal, feeds, replies, push"): REQ with
// filters over the service's own stored events, then EOSE, then live events as emissions happen
// (bus topic 'nostr'); CLOSE; EVENT from clients answered OK false "blocked: read-only". Frames
// are limited to 128 KiB (uWS closes a connection that sends more). While rate limits are on, an
// address holds a bounded number of connections and each connection a REQ budget
// (relay-limits.ts). The NIP-11 document (../documents/nip11.ts) is an HTTP route (routes/signal.ts): uWS hands
// non-upgrade GETs on /nostr back to the HTTP router.

import type { TemplatedApp, WebSocket, WebSocketBehavior } from 'uWebSockets.js';
import type { Ctx } from '../../domain/ports.js';
import { type NostrFilter, nostrEvents, type StoredNostrEvent } from '../../domain/signal.js';
import { clientAddress } from '../admission/client-ip.js';
import { ipKey } from '../admission/limits/keys.js';
import { RelayLimits, type ReqBudget } from '../admission/limits/relay-limits.js';
import { MAX_FRAME_BYTES, MAX_LIMIT, MAX_SUBSCRIPTIONS } from '../documents/nip11.js';
import { answerHead } from '../edge/head.js';
import { refuseOrigin } from '../edge/io.js';
import { peerAddress } from '../edge/peer.js';
import { upgradeOriginAllowed } from '../origin.js';
import { NOSTR_PATHS } from '../paths.js';
import { matches, parseClientMessage } from './filters.js';

interface Sub {
  filters: NostrFilter[];
  /** False until stored events and EOSE are sent; live events wait in `buffer` meanwhile. */
  ready: boolean;
  buffer: StoredNostrEvent[];
  sent: Set<string>;
}

interface Conn {
  subs: Map<string, Sub>;
  closed: boolean;
  /** The peer's counting key (its address; IPv6: the /64), and whether it holds one of its
   * address's connections (false: refused at open). */
  address: string;
  admitted: boolean;
  budget: ReqBudget;
}

export interface NostrRelayHandle {
  close(): void;
}

export function mountNostrRelay(app: TemplatedApp, ctx: Ctx): NostrRelayHandle {
  const sockets = new Set<WebSocket<Conn>>();
  const limits = new RelayLimits(ctx.config.nostrRelay, ctx.config.rateLimits);

  const send = (ws: WebSocket<Conn>, frames: unknown[][]): void => {
    if (ws.getUserData().closed || frames.length === 0) return;
    ws.cork(() => {
      for (const f of frames) ws.send(JSON.stringify(f));
    });
  };

  const deliver = (ws: WebSocket<Conn>, subId: string, sub: Sub, events: StoredNostrEvent[]): void => {
    const fresh = events.filter((e) => !sub.sent.has(e.id) && sub.filters.some((f) => matches(f, e)));
    for (const e of fresh) sub.sent.add(e.id);
    send(
      ws,
      fresh.map((e) => ['EVENT', subId, e]),
    );
  };

  const unsubscribe = ctx.bus.subscribe('nostr', (m) => {
    const events = m.data as StoredNostrEvent[];
    for (const ws of sockets) {
      for (const [subId, sub] of ws.getUserData().subs) {
        if (sub.ready) deliver(ws, subId, sub, events);
        else sub.buffer.push(...events);
      }
    }
  });

  async function req(ws: WebSocket<Conn>, subId: string, filters: NostrFilter[]): Promise<void> {
    const conn = ws.getUserData();
    const refused = limits.spend(conn.budget, Date.now());
    if (refused) {
      send(ws, [['CLOSED', subId, refused]]);
      return;
    }
    if (!conn.subs.has(subId) && conn.subs.size >= MAX_SUBSCRIPTIONS) {
      send(ws, [['CLOSED', subId, `error: at most ${MAX_SUBSCRIPTIONS} subscriptions per connection`]]);
      return;
    }
    const sub: Sub = { filters, ready: false, buffer: [], sent: new Set() };
    conn.subs.set(subId, sub);
    const found = new Map<string, StoredNostrEvent>();
    try {
      for (const f of filters) for (const e of await nostrEvents(ctx, f, MAX_LIMIT)) found.set(e.id, e);
    } catch (err) {
      ctx.log.error({ err }, 'nostr relay query failed');
      if (conn.subs.get(subId) === sub) conn.subs.delete(subId);
      send(ws, [['CLOSED', subId, 'error: could not read events']]);
      return;
    }
    if (conn.closed || conn.subs.get(subId) !== sub) return; // closed or replaced meanwhile
    const stored = [...found.values()].sort((a, b) => b.created_at - a.created_at || a.id.localeCompare(b.id));
    for (const e of stored) sub.sent.add(e.id);
    send(ws, [...stored.map((e) => ['EVENT', subId, e]), ['EOSE', subId]]);
    sub.ready = true;
    deliver(ws, subId, sub, sub.buffer);
    sub.buffer = [];
  }

  const head = answerHead(ctx.config);
  const behavior: WebSocketBehavior<Conn> = {
    maxPayloadLength: MAX_FRAME_BYTES,
    maxBackpressure: 1024 * 1024,
    closeOnBackpressureLimit: true,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => {
      // A browser page from an origin not allowed (STREAM_ALLOWED_ORIGINS) is refused with 403.
      const origin = req.getHeader('origin');
      if (!upgradeOriginAllowed(origin, ctx.config.streamAllowedOrigins)) {
        refuseOrigin(res, head, origin);
        return;
      }
      const remote = peerAddress(res);
      const address = ipKey(clientAddress(ctx.config.trustProxy, remote, req.getHeader('x-forwarded-for') || undefined));
      res.upgrade<Conn>(
        { subs: new Map(), closed: false, address, admitted: false, budget: limits.newBudget(Date.now()) },
        req.getHeader('sec-websocket-key'),
        req.getHeader('sec-websocket-protocol'),
        req.getHeader('sec-websocket-extensions'),
        context,
      );
    },
    open: (ws) => {
      const conn = ws.getUserData();
      // Over the address's cap the connection is told why in NIP-01's terms, then closed (a
      // refused upgrade would tell a Nostr client nothing it could read).
      if (!limits.admit(conn.address)) {
        conn.closed = true;
        ws.send(JSON.stringify(['NOTICE', limits.connectionsRefusal]));
        ws.end(1008, 'rate-limited');
        return;
      }
      conn.admitted = true;
      sockets.add(ws);
    },
    message: (ws, data) => {
      if (ws.getUserData().closed) return;
      const msg = parseClientMessage(new Uint8Array(data));
      switch (msg.type) {
        case 'REQ':
          void req(ws, msg.subId, msg.filters);
          break;
        case 'CLOSE':
          ws.getUserData().subs.delete(msg.subId);
          send(ws, [['CLOSED', msg.subId, '']]);
          break;
        case 'EVENT':
          send(ws, [['OK', msg.id, false, 'blocked: read-only']]);
          break;
        case 'INVALID':
          send(ws, [msg.subId ? ['CLOSED', msg.subId, msg.reason] : ['NOTICE', msg.reason]]);
          break;
      }
    },
    close: (ws) => {
      const conn = ws.getUserData();
      conn.closed = true;
      if (conn.admitted) limits.release(conn.address);
      conn.admitted = false;
      sockets.delete(ws);
    },
  };
  // NDK and other clients dial the relay with a trailing slash; both spellings are the relay.
  for (const path of NOSTR_PATHS) app.ws<Conn>(path, behavior);

  return {
    close() {
      unsubscribe();
      for (const ws of [...sockets]) ws.end(1001, 'server shutting down');
      sockets.clear();
    },
  };
}
