// The topic ops of a stream session (DECISIONS.md "Real-time stream"): subscribe (with replay
// from a cursor, then join, nothing missed and nothing sent twice), unsubscribe, and leaving a
// topic. dispatch.ts runs them.

import { fail } from '../../domain/errors.js';
import type { BusMessage } from '../../domain/ports.js';
import type { Fanout } from './fanout.js';
import { ackFrame, eventFrame, MAX_BACKPRESSURE_BYTES, type Ref } from './frames.js';
import type { InboxHub } from './inbox-hub.js';
import { type Socket, send, uwsTopic } from './session.js';
import { isTopic, MEMBER_TOPICS, TOPICS } from './topics.js';

/** What the topic ops use of the stream. */
export interface Topics {
  fanout: Fanout;
  /** The per-session topic `inbox`. */
  inbox: InboxHub;
}

const REPLAY_BATCH = 200;

/** The most events one `subscribe {since}` replays (DECISIONS.md "Reliability promises"): older
 * history is read from the topic's REST pages, so `since: 0` cannot make a node stream it all. */
export const REPLAY_MAX = 2000;

/** Where the history of a replayable topic is paged over REST, named in a truncated replay. */
const REST_PAGES: Partial<Record<string, string>> = { chat: '/api/v1/chat', signal: '/signal.json' };

export function leave(env: Topics, ws: Socket, topic: string): boolean {
  if (topic === 'inbox') return env.inbox.unsubscribe(ws);
  const { fanout } = env;
  const s = ws.getUserData();
  const wasReplaying = s.replaying?.delete(topic) ?? false;
  fanout.unwatch(topic, s);
  return ws.unsubscribe(uwsTopic(topic, s.encoding)) || wasReplaying;
}

function checkTopic(ws: Socket, topic: string): void {
  if (!isTopic(topic)) {
    fail('VALIDATION_FAILED', `unknown topic ${topic}`, { fields: [{ path: 'topic', message: `one of ${TOPICS.join(', ')}` }] });
  }
  if (MEMBER_TOPICS.has(topic as never) && ws.getUserData().caller.kind !== 'member') {
    fail('REGISTRATION_REQUIRED', `the ${topic} topic is open to registered members only; send auth {token} first`);
  }
}

export function unsubscribe(env: Topics, ws: Socket, topic: string) {
  if (!isTopic(topic)) checkTopic(ws, topic);
  return { topic, subscribed: false, was_subscribed: leave(env, ws, topic) };
}

export async function subscribe(
  env: Topics,
  ws: Socket,
  r: Ref,
  topic: string,
  since: string | undefined,
  run: { readonly late: boolean },
): Promise<void> {
  checkTopic(ws, topic);
  const s = ws.getUserData();
  if (topic === 'inbox' && s.caller.kind === 'member') return env.inbox.subscribe(ws, s.caller.member.id, r, since);
  const t = uwsTopic(topic, s.encoding);
  const feed = env.fanout.feed(topic as never);
  if (ws.isSubscribed(t) || s.replaying?.has(topic)) return send(ws, ackFrame(r, { topic, subscribed: true, replayed: 0 }));
  if (since === undefined || !feed?.replay) {
    ws.subscribe(t);
    return send(ws, ackFrame(r, { topic, subscribed: true, replayed: 0, replay: feed?.replay ? 'none' : 'not_stored' }));
  }
  // Replay, then join: live events arriving meanwhile are held, and the cursor decides what is
  // sent, so nothing is missed and nothing is sent twice (DECISIONS.md "Real-time stream").
  const held: BusMessage[] = [];
  s.replaying ??= new Map();
  s.replaying.set(topic, held);
  env.fanout.watch(topic, s);
  let cursor = BigInt(since);
  let replayed = 0;
  try {
    for (;;) {
      const batch = await feed.replay(cursor.toString(), Math.min(REPLAY_BATCH, REPLAY_MAX - replayed));
      // Past the deadline the client was told UNAVAILABLE: the replay stops, nothing joins.
      if (!s.open || run.late || s.replaying?.get(topic) !== held) return;
      for (const e of batch) {
        if (BigInt(e.id) <= cursor) continue;
        send(ws, eventFrame(topic, e.id, e.data));
        cursor = BigInt(e.id);
        replayed++;
      }
      if (replayed >= REPLAY_MAX && (await feed.replay(cursor.toString(), 1)).length > 0) {
        // More is kept than one replay sends: join live now; what lies between last_id and the
        // first live event is read from the REST pages.
        ws.subscribe(t);
        const rest = REST_PAGES[topic] ?? null;
        return send(ws, ackFrame(r, { topic, subscribed: true, replayed, last_id: cursor.toString(), replay: 'truncated', rest }));
      }
      if (batch.length < REPLAY_BATCH || replayed >= REPLAY_MAX) break;
      await drained(ws);
    }
    // Events settled but still waiting in the fan-out queue go out now, into `held`, so the join
    // below cannot deliver one of them a second time after the replay sent it.
    env.fanout.flush();
    if (run.late) return;
    for (const e of held) {
      if (BigInt(e.id) <= cursor) continue;
      send(ws, eventFrame(topic, e.id, e.data));
      cursor = BigInt(e.id);
      replayed++;
    }
    ws.subscribe(t);
    send(ws, ackFrame(r, { topic, subscribed: true, replayed, last_id: cursor.toString() }));
  } finally {
    if (s.replaying?.get(topic) === held) s.replaying.delete(topic);
    env.fanout.unwatch(topic, s);
  }
}

/** Waits while a long replay has filled the socket's buffer (the slow-consumer bound still applies). */
async function drained(ws: Socket): Promise<void> {
  const s = ws.getUserData();
  while (s.open && ws.getBufferedAmount() > MAX_BACKPRESSURE_BYTES / 4) await new Promise((ok) => setTimeout(ok, 10));
}
