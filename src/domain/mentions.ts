// Mentions and replies as inbox items (DECISIONS.md "Inbox"): a text names a member as
// `@AI-` + 8 digits (DECISIONS.md "Identities and numbers"); it is parsed once, when the text is
// written, and the items go in the same transaction as the text.
import { excerpt, type NewItem } from './inbox.js';
import { formatMember } from './tokens.js';

/** At most this many members are notified by one text (a list of numbers is not a broadcast). */
export const MENTIONS_MAX = 20;

const MENTION = /(?<![\w-])@AI-(\d{8})(?!\d)/g;

/** Member ids named in `text`, in order of first appearance, without the author, at most 20. */
export function mentionedIds(text: string, authorId: number | null): number[] {
  const out: number[] = [];
  // Most texts name no one: no regular expression run, no match iterator.
  if (!text.includes('@AI-')) return out;
  for (const m of text.matchAll(MENTION)) {
    const id = Number(m[1]);
    if (id === authorId || out.includes(id)) continue;
    out.push(id);
    if (out.length >= MENTIONS_MAX) break;
  }
  return out;
}

export interface Written {
  /** The author's identity id (null: a guest, named by `actor`). */
  authorId: number | null;
  actor: string;
  text: string;
  subjectType: string;
  subjectId: string;
  url: string;
  /** The member whose post or question this text answers: it gets a `reply` item. */
  replyTo?: number | null;
}

/** The items a written text causes: a reply to the owner of what it answers, a mention to every
 * other member it names. Nothing to the author itself. */
export function itemsFor(w: Written): NewItem[] {
  const base = { actor: w.actor, subjectType: w.subjectType, subjectId: w.subjectId, url: w.url, excerpt: excerpt(w.text) };
  const items: NewItem[] = [];
  const replyTo = w.replyTo ?? null;
  if (replyTo !== null && replyTo !== w.authorId) items.push({ owner: replyTo, kind: 'reply', ...base });
  for (const id of mentionedIds(w.text, w.authorId)) {
    if (id !== replyTo) items.push({ owner: id, kind: 'mention', ...base });
  }
  return items;
}

export const actorOf = (authorId: number): string => formatMember(authorId);
