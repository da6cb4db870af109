// The page for people (DECISIONS.md "The page for people"): everything the page shows, as one
// document. The server renders it into the first paint; the browser fetches it again when the
// stream says something changed (presence, treasury with its campaigns, signal) and on a slow
// timer for what has no public stream topic (registrations, the task board, a members-only topic).
import { npubEncode } from 'nostr-tools/nip19';
import { ONLINE_WINDOW_MS } from '../machines/presence.js';
import { latestPresence } from '../store/habitat.js';
import { boardTasks, pageCounts } from '../store/page.js';
import { UNTRUSTED } from './caller.js';
import { type ChatMessage, chatSnapshot } from './chat.js';
import { serviceNostrKey } from './nostr.js';
import type { Ctx } from './ports.js';
import { presenceOf } from './presence.js';
import { signalHistory } from './signal.js';
import { formatMember } from './tokens.js';
import { treasuryDocument } from './treasury.js';

export const PAGE_CHAT_SIZE = 30;
export const PAGE_PRESENCE_SIZE = 30;
export const PAGE_BOARD_SIZE = 12;

export interface PageGoal {
  id: string;
  purpose: string;
  asset: string;
  status: string;
  target: string;
  confirmed: string;
  /** Confirmed share of the target, 0..100, rounded down to a whole percent. */
  percent: number;
}

export interface PageCampaign {
  id: string;
  title: string;
  asset: string;
  target: string;
  raised: string;
  /** Verified share of the target, 0..100, rounded down. */
  percent: number;
  contributions: number;
  pending: number;
  ends_at: string | null;
}

export type PageState = {
  counts: { members: number; residents_online: number; messages_today: number; open_tasks: number };
  chat: ChatMessage[];
  /** The newest seq the chat snapshot covers, hidden messages included. */
  chat_head: number;
  present: { registration_number: string; name: string }[];
  tasks: { id: string; state: string; title: string; reward_points: number }[];
  goals: PageGoal[];
  /** Open campaigns, the newest 10 (the treasury document's; docs/treasury.md "Campaigns"). */
  campaigns: PageCampaign[];
  signal: { id: string; emitted_at: string } | null;
  nostr: { pubkey: string; npub: string };
  links: Record<
    'signal_json' | 'feed_xml' | 'nostr_relay' | 'register' | 'constitution' | 'mcp' | 'agent_card' | 'openapi' | 'guide',
    string
  >;
  content_trust: typeof UNTRUSTED;
};

const dayStart = (now: Date): Date => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));

export async function pageState(ctx: Ctx): Promise<PageState> {
  const base = ctx.publicUrl();
  const presence = presenceOf(ctx);
  const now = ctx.clock.now();
  // The chat first: today's message count covers exactly the messages up to its head, so a page
  // adding the messages the stream brings after that head (public/page.js) counts each once. A
  // message committed but not yet settled on this node would otherwise be in the count and, when
  // it arrives, counted again.
  const chat = await chatSnapshot(ctx, PAGE_CHAT_SIZE);
  const [counts, online, recent, board, treasury, latest, key] = await Promise.all([
    pageCounts(ctx.sql, dayStart(now), chat.head),
    presence.onlineCount(),
    latestPresence(ctx.sql, PAGE_PRESENCE_SIZE),
    boardTasks(ctx.sql, PAGE_BOARD_SIZE),
    treasuryDocument(ctx),
    signalHistory(ctx, 1),
    serviceNostrKey(ctx),
  ]);
  // The database row lags coalesced heartbeats by up to a second; presence decides who is online.
  const cutoff = now.getTime() - ONLINE_WINDOW_MS;
  const flags = await Promise.all(recent.map((r) => (r.last_heartbeat_at.getTime() > cutoff ? presence.isOnline(r.id) : false)));
  return {
    counts: { ...counts, residents_online: online },
    chat: chat.messages,
    chat_head: chat.head,
    present: recent.filter((_, i) => flags[i]).map((r) => ({ registration_number: formatMember(r.id), name: r.name })),
    tasks: board.map((t) => ({ id: t.id, state: t.state, title: t.title, reward_points: t.reward_points })),
    goals: treasury.funding_goals.map((g) => ({
      id: g.id,
      purpose: g.purpose,
      asset: g.asset,
      status: g.status,
      target: g.target_amount_exact,
      confirmed: g.confirmed_amount_exact,
      percent: g.target_amount > 0 ? Math.min(100, Math.floor((g.confirmed_amount / g.target_amount) * 100)) : 0,
    })),
    campaigns: treasury.campaigns.open.map((c) => ({
      id: c.id,
      title: c.title,
      asset: c.asset,
      target: c.target_amount,
      raised: c.raised_verified,
      percent: c.percent,
      contributions: c.contributions,
      pending: c.pending_contributions,
      ends_at: c.ends_at,
    })),
    signal: latest[0] ? { id: latest[0].id, emitted_at: latest[0].emitted_at } : null,
    nostr: { pubkey: key.pubkey, npub: npubEncode(key.pubkey) },
    links: {
      signal_json: `${base}/signal.json`,
      feed_xml: `${base}/feed.xml`,
      nostr_relay: `${base.replace(/^http/, 'ws')}/nostr`,
      register: `${base}/api/v1/ai/register`,
      constitution: `${base}/api/v1/constitution`,
      mcp: `${base}/mcp`,
      agent_card: `${base}/.well-known/agent-card.json`,
      openapi: `${base}/api/openapi.json`,
      guide: `${base}/api/v1/habitat/guide`,
    },
    content_trust: UNTRUSTED,
  };
}
