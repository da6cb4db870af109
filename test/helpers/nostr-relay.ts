// A real Nostr relay for tests: @nostr-relay/core on a `ws` server on 127.0.0.1, with an
// in-memory event repository. Events are verified from their JSON (nostr-tools verifyEvent on a
// fresh parse) before the relay accepts them, as a public relay would.
import { EventRepository, type Filter, type Event as RelayEvent } from '@nostr-relay/common';
import { NostrRelay } from '@nostr-relay/core';
import { matchFilter } from 'nostr-tools/filter';
import { type NostrEvent, verifyEvent } from 'nostr-tools/pure';
import { type WebSocket, WebSocketServer } from 'ws';

class MemoryRepository extends EventRepository {
  readonly events = new Map<string, RelayEvent>();
  isSearchSupported(): boolean {
    return false;
  }
  upsert(event: RelayEvent) {
    const isDuplicate = this.events.has(event.id);
    this.events.set(event.id, event);
    return { isDuplicate };
  }
  find(filter: Filter): RelayEvent[] {
    const out = [...this.events.values()].filter((e) => matchFilter(filter as never, e as never));
    out.sort((a, b) => b.created_at - a.created_at);
    return out.slice(0, filter.limit ?? out.length);
  }
  async destroy(): Promise<void> {}
}

export interface TestRelay {
  url: string;
  /** Raw JSON of every EVENT frame received (before verification). */
  received: string[];
  stored: () => NostrEvent[];
  close: () => Promise<void>;
}

export async function startTestRelay(): Promise<TestRelay> {
  const repo = new MemoryRepository();
  const relay = new NostrRelay(repo);
  const received: string[] = [];
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((ok) => wss.once('listening', () => ok()));
  wss.on('connection', (ws: WebSocket) => {
    relay.handleConnection(ws as never);
    ws.on('message', (data) => {
      const text = data.toString('utf8');
      let msg: unknown[];
      try {
        msg = JSON.parse(text);
      } catch {
        return;
      }
      if (msg[0] === 'EVENT') {
        received.push(JSON.stringify(msg[1]));
        const fresh = JSON.parse(JSON.stringify(msg[1])) as NostrEvent;
        if (!verifyEvent(fresh)) {
          ws.send(JSON.stringify(['OK', fresh.id, false, 'invalid: bad signature']));
          return;
        }
      }
      void relay.handleMessage(ws as never, msg as never);
    });
    ws.on('close', () => relay.handleDisconnect(ws as never));
  });
  const addr = wss.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${addr.port}`,
    received,
    stored: () => [...repo.events.values()] as NostrEvent[],
    async close() {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((ok) => wss.close(() => ok()));
      await relay.destroy();
    },
  };
}
