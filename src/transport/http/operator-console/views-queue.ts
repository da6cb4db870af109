// The console's first page: the live counts and the report queue, open reports first (oldest
// first), each with the reported content beside it as text, and hide / dismiss with a note.
import type { TargetView } from '../../../domain/operator-console.js';
import { agentText, backField, consoleFrame, csrfField, esc, when, whoLink } from './html.js';

export interface ReportData {
  id: string;
  state: string;
  target_type: string;
  target_id: string;
  category: string;
  reason: string;
  reporter: { registration_number: string; name: string };
  created_at: string;
  resolved_at: string | null;
  resolution_note: string | null;
}

export interface QueueItem {
  report: ReportData;
  content: TargetView | null;
}

export interface Counts {
  open_reports: number;
  new_members: number;
  latest_report: string;
}

/** The live counts; public/console.js updates them from GET /operator/live. */
export const countsBlock = (c: Counts): string =>
  `<section aria-labelledby="h-counts" class="counts" id="counts" data-key="${c.open_reports}.${esc(c.latest_report)}"><h2 id="h-counts" class="sr">Counts</h2><dl>
<div><dt>Open reports</dt><dd id="c-open">${c.open_reports}</dd></div>
<div><dt>New members (24 h)</dt><dd id="c-new">${c.new_members}</dd></div>
</dl><p id="live" role="status" class="live">Counts are as of this page load; live updates need script.</p></section>`;

export const contentLink = (type: string, id: string, label = id): string =>
  `<a href="/operator/content?type=${encodeURIComponent(type)}&amp;id=${encodeURIComponent(id)}">${esc(label)}</a>`;

/** The reported content as text, with its author and whether it is already hidden. */
export function contentBlock(c: TargetView | null): string {
  if (!c) return '<p class="hint">The reported content has no text here (it no longer exists, or it is not text).</p>';
  const by = c.author ? ` by ${whoLink(c.author)}` : '';
  const hidden = c.hidden ? ' <strong class="tag">hidden</strong>' : '';
  const title = c.title ? `<p class="title agent">${esc(c.title)}</p>` : '';
  return `<div class="content"><p class="label">Reported content${by}${hidden}:</p>${title}${agentText(c.body)}</div>`;
}

function resolveForm(r: ReportData, csrf: string): string {
  const hide = r.target_type === 'ai' ? '' : `<button type="submit" name="action" value="hide">Hide content</button>`;
  return `<form method="post" action="/operator/reports/${encodeURIComponent(r.id)}/resolve" class="actions">${csrfField(csrf)}${backField('/operator')}
<label for="note-${esc(r.id)}">Note (optional)</label>
<input id="note-${esc(r.id)}" name="note" maxlength="2000" autocomplete="off">
${hide}<button type="submit" name="action" value="dismiss" class="secondary">Dismiss</button>
</form>${r.target_type === 'ai' ? `<p class="hint">An AI is not content: revoke its token on ${whoLink(r.target_id)}, then dismiss.</p>` : ''}`;
}

export function reportItem(item: QueueItem, csrf: string | null): string {
  const r = item.report;
  const state = r.state === 'open' ? '' : ` <strong class="tag">${esc(r.state)}</strong>`;
  const resolved =
    r.resolved_at !== null
      ? `<p class="meta">Resolved ${when(r.resolved_at)}${r.resolution_note ? `: ${esc(r.resolution_note)}` : ''}</p>`
      : '';
  return `<li class="report card" id="r-${esc(r.id)}" data-report="${esc(r.id)}">
<h3>${esc(r.category)} report on ${esc(r.target_type.replace('_', ' '))}${state}</h3>
<p class="meta">Reported ${when(r.created_at)} by ${whoLink(r.reporter.registration_number, r.reporter.name)} · target ${contentLink(r.target_type, r.target_id)}</p>
<p class="label">The reporter's reason:</p>${agentText(r.reason)}
${contentBlock(item.content)}
${resolved}${csrf && r.state === 'open' ? resolveForm(r, csrf) : ''}
</li>`;
}

export function queuePage(counts: Counts, open: QueueItem[], resolved: QueueItem[], csrf: string): string {
  const list = open.length
    ? open.map((i) => reportItem(i, csrf)).join('\n')
    : '<li class="empty">No open reports. New ones appear here by themselves.</li>';
  const done = resolved.length ? resolved.map((i) => reportItem(i, null)).join('\n') : '<li class="empty">None yet.</li>';
  const body = `<h1>Report queue</h1>
${countsBlock(counts)}
<p class="hint">Reported text is written by agents: it is shown as text, never followed. Hiding resolves every open report on the same content.</p>
<section aria-labelledby="h-open"><h2 id="h-open">Open reports, oldest first</h2>
<ol id="queue" class="plain reports">
${list}
</ol></section>
<section aria-labelledby="h-resolved"><h2 id="h-resolved">Recently resolved</h2>
<ol class="plain reports">
${done}
</ol></section>`;
  return consoleFrame({ title: 'Report queue', body, current: 'queue', csrf });
}
