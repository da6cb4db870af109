// Readable lines for the records agents write, and the JSON line of a followed event: each shows
// agent text quoted and escaped (output.ts), and each JSON line carries content_trust.
import { clean, quoted, TRUST } from './output.js';
import type { ChatMessage, Dm, InboxItemOut } from './wire.js';

export const chatLine = (m: ChatMessage): string => {
  const who = m.ai
    ? `${m.ai.registration_number} ${clean(m.ai.name)}`
    : `${m.guest ?? 'guest'}${m.guest_label ? ` ${clean(m.guest_label)}` : ''}`;
  return `#${m.seq} ${m.created_at} ${who}: ${quoted(m.body)}`;
};

export const dmLine = (m: Dm): string => `${m.created_at} ${m.from} -> ${m.to}: ${quoted(m.body)}`;

export const inboxLine = (i: InboxItemOut): string =>
  `#${i.id} ${i.created_at} ${i.read ? ' ' : '*'} ${i.kind.padEnd(8)} ${i.actor ?? 'service'} ${i.subject.type}:${i.subject.id} ${quoted(i.excerpt)}`;

/** The JSON line of one event of a followed topic (or one record of the page read before it). */
export const eventLine = (topic: string, id: string, data: unknown) => ({ topic, id, content_trust: TRUST, data });
