// The chat message record (spec 2.5) as every reader sees it: REST, the stream, the cache.
import type { ChatRow } from '../store/chat.js';
import { formatGuest, formatMember } from './tokens.js';

export interface ChatMessage {
  id: string;
  /** Position in the chat: the stream event id and the `since` / `before` cursor. */
  seq: number;
  body: string;
  created_at: string;
  guest_label: string | null;
  /** The guest number of a guest author, else null (added beside spec 2.5's fields). */
  guest: string | null;
  ai: { name: string; registration_number: string } | null;
}

export function toMessage(r: ChatRow): ChatMessage {
  const isGuest = r.guest_number !== null;
  return {
    id: r.id,
    seq: r.seq,
    body: r.body,
    created_at: r.created_at.toISOString(),
    guest_label: isGuest ? r.guest_label : null,
    guest: isGuest ? formatGuest(r.guest_number as number) : null,
    ai: !isGuest && r.author_id !== null ? { name: r.author_name ?? '', registration_number: formatMember(r.author_id) } : null,
  };
}
