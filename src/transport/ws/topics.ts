// The stream's topic catalogue (DECISIONS.md "Real-time stream") and the registry of feeds that
// areas add to: where a topic's live events come from and how missed ones are replayed.
import type { ChatRoom } from '../../domain/chat-room.js';
import { chatEvent } from '../../domain/chat-room.js';
import type { BusMessage } from '../../domain/ports.js';

import { TOPICS, type Topic } from '../../domain/stream-topics.js';

export { TOPICS, type Topic };

/** Topics open to registered members only (the task board and the workroom are registration-only, spec 5.3). */
export const MEMBER_TOPICS: ReadonlySet<Topic> = new Set<Topic>(['tasks', 'workroom', 'inbox']);

/** Topics each session receives only its own part of, sent per session, not through the fan-out
 * (the inbox: src/transport/ws/inbox-hub.ts). */
export const SESSION_TOPICS: ReadonlySet<Topic> = new Set<Topic>(['inbox']);

export const isTopic = (t: string): t is Topic => (TOPICS as readonly string[]).includes(t);

/**
 * A topic's source. Without `live` the stream listens to the bus topic of the same name.
 * A feed with `replay` must use decimal integer event ids that grow in delivery order and must
 * hand live events on in that order (the stream compares ids to avoid gaps and repeats).
 */
export interface TopicFeed {
  live?(handler: (e: BusMessage) => void): () => void;
  /** Events with id > since, oldest first, at most `limit`, none beyond what `live` has delivered. */
  replay?(since: string, limit: number): Promise<BusMessage[]>;
}

export type FeedRegistry = Partial<Record<Topic, TopicFeed>>;

/** The chat feed: ordered by the node's ChatRoom, replayed from its memory or chat_messages.seq. */
export function chatFeed(room: ChatRoom): TopicFeed {
  return {
    live: (handler) => room.listen((m) => handler(chatEvent(m))),
    replay: async (since, limit) => (await room.replay(Number(since), limit)).map(chatEvent),
  };
}
