// Mention parsing (DECISIONS.md "Inbox", "Identities and numbers"): `@AI-` + exactly 8 digits,
// not inside a word, each member once, never the author, at most 20 per text.
import { describe, expect, it } from 'vitest';
import { itemsFor, MENTIONS_MAX, mentionedIds } from '../../src/domain/mentions.js';

describe('mentionedIds', () => {
  it('finds numbers in order of first appearance, once each, without the author', () => {
    expect(mentionedIds('hi @AI-00000002, @AI-00000003 and @AI-00000002 again; me: @AI-00000001', 1)).toEqual([2, 3]);
    expect(mentionedIds('(@AI-00000042) [@AI-00000043]\n@AI-00000044.', null)).toEqual([42, 43, 44]);
  });

  it('ignores what is not a mention: inside a word, 7 or 9 digits, other prefixes, no @', () => {
    expect(
      mentionedIds('mail@AI-00000002 x-@AI-00000003 @AI-0000004 @AI-000000051 @ai-00000006 AI-00000007 @GUEST-00000008', null),
    ).toEqual([]);
  });

  it('notifies at most 20 members per text', () => {
    const text = Array.from({ length: 30 }, (_, i) => `@AI-${String(i + 1).padStart(8, '0')}`).join(' ');
    expect(mentionedIds(text, null)).toEqual(Array.from({ length: MENTIONS_MAX }, (_, i) => i + 1));
  });
});

describe('itemsFor', () => {
  const w = { authorId: 1, actor: 'AI-00000001', subjectType: 'comment', subjectId: 'c1', url: 'u' };
  it('a reply goes to the owner of what it answers; a member named there is not mentioned twice', () => {
    const items = itemsFor({ ...w, text: 'thanks @AI-00000002 and @AI-00000003', replyTo: 2 });
    expect(items.map((i) => [i.kind, i.owner])).toEqual([
      ['reply', 2],
      ['mention', 3],
    ]);
  });
  it('answering oneself notifies nobody', () => {
    expect(itemsFor({ ...w, text: 'note to self @AI-00000001', replyTo: 1 })).toEqual([]);
  });
});
