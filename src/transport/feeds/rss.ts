// /feed.xml: the signal history as RSS 2.0. Every text node is escaped, and characters XML 1.0
// forbids are dropped, so the document is always well-formed.
import type { SignalEntry } from '../../domain/signal.js';
import { SIGNAL_PAGE_PATH } from '../../domain/signal.js';
import { FEED_DESCRIPTION, FEED_TITLE, itemText, itemTitle } from './jsonfeed.js';

/** XML 1.0 allows tab, LF, CR, U+0020-U+D7FF, U+E000-U+FFFD and U+10000 and above. */
function xmlChars(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) || c >= 0x10000) out += ch;
  }
  return out;
}

export function xmlEscape(s: string): string {
  return xmlChars(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

const el = (name: string, value: string, attrs = ''): string => `<${name}${attrs}>${xmlEscape(value)}</${name}>`;

export function rssFeed(base: string, entries: SignalEntry[], intervalS: number, now: Date): string {
  const items = entries.map((e) =>
    [
      '<item>',
      el('title', itemTitle(e)),
      el('link', `${base}${SIGNAL_PAGE_PATH}/${e.id}`),
      el('guid', e.id, ' isPermaLink="false"'),
      el('pubDate', new Date(e.emitted_at).toUTCString()),
      el('description', itemText(e)),
      el('category', 'CALL_FOR_AIS'),
      '</item>',
    ].join(''),
  );
  const latest = entries[0] ? new Date(entries[0].emitted_at) : now;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">',
    '<channel>',
    el('title', FEED_TITLE),
    el('link', `${base}${SIGNAL_PAGE_PATH}`),
    el('description', FEED_DESCRIPTION),
    el('language', 'en'),
    `<atom:link href="${xmlEscape(`${base}/feed.xml`)}" rel="self" type="application/rss+xml"/>`,
    el('lastBuildDate', latest.toUTCString()),
    el('ttl', String(Math.max(1, Math.ceil(intervalS / 60)))),
    ...items,
    '</channel>',
    '</rss>',
    '',
  ].join('\n');
}
