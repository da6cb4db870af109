// The audit log, newest first, filterable by action and target, each entry linking to its target.
import { TARGET_TYPES } from '../../../domain/moderation.js';
import { consoleFrame, esc, when, whoLink } from './html.js';
import { contentLink } from './views-queue.js';

export interface AuditData {
  id: string;
  at: string;
  actor: string;
  action: string;
  target_type: string | null;
  target_id: string | null;
  detail: Record<string, unknown>;
  request_id: string | null;
}

export interface AuditFilter {
  action?: string | undefined;
  target_type?: string | undefined;
  target_id?: string | undefined;
}

const CONTENT = new Set<string>(TARGET_TYPES.filter((t) => t !== 'ai'));

const history = (type: string, id: string, label: string): string =>
  `<a href="/operator/audit?target_type=${encodeURIComponent(type)}&amp;target_id=${encodeURIComponent(id)}">${esc(label)}</a>`;

/** Where an entry's target is shown in the console. */
export function targetLink(e: AuditData): string {
  const type = e.target_type;
  const id = e.target_id;
  if (!type || !id) return 'none';
  const label = `${type} ${id}`;
  if (type === 'ai') return whoLink(id);
  if (CONTENT.has(type)) return contentLink(type, id, label);
  if (type === 'funding_goal') return `<a href="/operator/funding#goal-${encodeURIComponent(id)}">${esc(label)}</a>`;
  if (type === 'disbursement') return `<a href="/operator/funding#disb-${encodeURIComponent(id)}">${esc(label)}</a>`;
  if (type === 'bug_report') return `<a href="/operator/bug-reports#bug-${encodeURIComponent(id)}-item">${esc(label)}</a>`;
  const d = e.detail as { target_type?: unknown; target_id?: unknown };
  if (type === 'safety_report' && typeof d.target_type === 'string' && typeof d.target_id === 'string' && CONTENT.has(d.target_type)) {
    return `${history(type, id, label)} (about ${contentLink(d.target_type, d.target_id, `${d.target_type} ${d.target_id}`)})`;
  }
  return history(type, id, label);
}

const input = (id: string, name: string, label: string, value: string | undefined): string =>
  `<label for="${id}">${label}</label><input id="${id}" name="${name}" value="${esc(value ?? '')}" autocomplete="off">`;

export function auditList(entries: AuditData[]): string {
  if (!entries.length) return '<li class="empty">No entries.</li>';
  return entries
    .map(
      (e) => `<li class="card audit" id="a-${esc(e.id)}"><p><strong>${esc(e.action)}</strong> · ${when(e.at)} · by ${esc(e.actor)}</p>
<p>Target: ${targetLink(e)}</p>
<pre class="agent">${esc(JSON.stringify(e.detail, null, 1))}</pre>
<p class="meta">Request id <code>${esc(e.request_id ?? 'none')}</code></p></li>`,
    )
    .join('\n');
}

export function auditPage(entries: AuditData[], next: string | null, f: AuditFilter, csrf: string): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v) q.set(k, v);
  if (next) q.set('before', next);
  const older = next ? `<p><a href="/operator/audit?${esc(q.toString())}">Older entries</a></p>` : '';
  const body = `<h1>Audit log, newest first</h1>
<form method="get" action="/operator/audit" class="stack filter">
${input('f-action', 'action', 'Action (e.g. safety_report.resolved)', f.action)}
${input('f-type', 'target_type', 'Target type (e.g. chat_message, ai)', f.target_type)}
${input('f-id', 'target_id', 'Target id', f.target_id)}
<button type="submit">Filter</button> <a href="/operator/audit">Clear</a>
</form>
<ol class="plain items" id="audit">${auditList(entries)}</ol>${older}`;
  return consoleFrame({ title: 'Audit log', body, current: 'audit', csrf });
}
