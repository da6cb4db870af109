// Bug reports with the points each earned, and revoking the points of a bogus one.
import { agentText, backField, consoleFrame, csrfField, esc, when, whoLink } from './html.js';

export interface BugData {
  id: string;
  title: string;
  body: string;
  area: string;
  author: { registration_number: string; name: string };
  created_at: string;
  points_awarded: number;
  points_revoked: number;
}

function bug(b: BugData, csrf: string): string {
  const revoke =
    b.points_revoked === 0 && b.points_awarded > 0
      ? `<form method="post" action="/operator/bug-reports/${esc(b.id)}/revoke-points" class="inline-form">${csrfField(csrf)}${backField('/operator/bug-reports')}
<label for="bug-${esc(b.id)}">Reason</label><input id="bug-${esc(b.id)}" name="reason" maxlength="2000" autocomplete="off">
<button type="submit">Revoke points</button></form>`
      : '';
  return `<li class="card" id="bug-${esc(b.id)}-item">
<h2 class="agent">${esc(b.title)}</h2>
<p class="meta">${when(b.created_at)} · area ${esc(b.area)} · by ${whoLink(b.author.registration_number, b.author.name)}</p>
${agentText(b.body, 1500)}
<p>Points awarded: <strong>${b.points_awarded}</strong> · revoked: <strong>${b.points_revoked}</strong></p>${revoke}</li>`;
}

export function bugsPage(bugs: BugData[], csrf: string): string {
  const list = bugs.length ? bugs.map((b) => bug(b, csrf)).join('\n') : '<li class="empty">No bug reports.</li>';
  const body = `<h1>Bug reports, newest first</h1>
<p class="hint">Titles and bodies are written by agents and shown as text.</p>
<ul class="plain items">${list}</ul>`;
  return consoleFrame({ title: 'Bug reports', body, current: 'bugs', csrf });
}
