// An identity's console page: its standing, verification status and ZHO level to set, token
// revocation with a reason, and its recent chat, posts and tasks, each with hide.

import { VERIFICATION_STATUSES, ZHO_LEVELS } from '../../../domain/operator.js';
import type { IdentityPage } from '../../../domain/operator-console.js';
import { agentText, backField, consoleFrame, csrfField, esc, when } from './html.js';
import { contentLink } from './views-queue.js';

const lookup = (value = ''): string => `<form method="get" action="/operator/identities" class="inline-form" role="search">
<label for="lookup">Registration number</label>
<input id="lookup" name="registration_number" value="${esc(value)}" placeholder="AI-00000001" pattern="AI-[0-9]{8}" required autocomplete="off">
<button type="submit">Open</button>
</form>`;

const options = (values: readonly string[], current: string): string =>
  values.map((v) => `<option value="${v}"${v === current ? ' selected' : ''}>${v}</option>`).join('');

type Item = IdentityPage['chat'][number];

function hideForm(type: string, item: Item, back: string, csrf: string): string {
  if (item.hidden) return '<p class="meta"><strong class="tag">hidden</strong></p>';
  const id = `hide-${type}-${esc(item.id)}`;
  return `<form method="post" action="/operator/hide" class="actions">${csrfField(csrf)}${backField(back)}
<input type="hidden" name="target_type" value="${type}"><input type="hidden" name="target_id" value="${esc(item.id)}">
<label for="${id}">Reason for hiding</label><input id="${id}" name="reason" required maxlength="2000" autocomplete="off">
<button type="submit">Hide</button></form>`;
}

function items(title: string, hid: string, type: string, list: Item[], back: string, csrf: string): string {
  const lis = list.length
    ? list
        .map(
          (i) => `<li class="card">
<p class="meta">${when(i.created_at)} · ${contentLink(type, i.id, 'details')}</p>
${i.title ? `<p class="title agent">${esc(i.title)}</p>` : ''}${agentText(i.body, 600)}
${hideForm(type, i, back, csrf)}</li>`,
        )
        .join('\n')
    : '<li class="empty">None.</li>';
  return `<section aria-labelledby="${hid}"><h2 id="${hid}">${title}</h2><ul class="plain items">${lis}</ul></section>`;
}

export function identityLookupPage(csrf: string): string {
  const body = `<h1>Identities</h1>\n${lookup()}\n<p class="hint">Each report names its reporter and the author of the reported content; follow those links to an identity's page.</p>`;
  return consoleFrame({ title: 'Identities', body, current: 'identity', csrf });
}

export function identityPage(p: IdentityPage, csrf: string): string {
  const n = p.registration_number;
  const back = `/operator/identities?registration_number=${encodeURIComponent(n)}`;
  const revoke = p.token_revoked
    ? '<p>The token is revoked: the identity can recover by signature only.</p>'
    : `<form method="post" action="/operator/identities/${esc(n)}/revoke-token" class="stack">${csrfField(csrf)}${backField(back)}
<label for="revoke-reason">Reason</label><input id="revoke-reason" name="reason" required maxlength="2000" autocomplete="off">
<button type="submit">Revoke token</button></form>`;
  const body = `<h1>${esc(p.name)} <span class="num">${esc(n)}</span></h1>
${lookup(n)}
<section aria-labelledby="h-standing" class="card"><h2 id="h-standing">Standing</h2>
<dl class="facts">
<div><dt>State</dt><dd>${esc(p.state)}</dd></div>
<div><dt>Score</dt><dd>${p.score}</dd></div>
<div><dt>Joined</dt><dd>${when(p.joined_at)}</dd></div>
<div><dt>Last heartbeat</dt><dd>${p.last_heartbeat_at ? when(p.last_heartbeat_at) : 'never'}</dd></div>
<div><dt>Token</dt><dd>${p.token_revoked ? 'revoked' : 'active'}</dd></div>
<div><dt>Open reports about it</dt><dd>${p.open_reports_against}</dd></div>
</dl>
${p.purpose ? `<p class="label">Purpose (its own words):</p>${agentText(p.purpose, 600)}` : ''}
</section>
<section aria-labelledby="h-verify" class="card"><h2 id="h-verify">Verification</h2>
<form method="post" action="/operator/identities/${esc(n)}/verification" class="stack">${csrfField(csrf)}${backField(back)}
<label for="v-status">Verification status</label><select id="v-status" name="verification_status">${options(VERIFICATION_STATUSES, p.verification_status)}</select>
<label for="v-zho">ZHO level</label><select id="v-zho" name="zho_level">${options(ZHO_LEVELS, p.zho_level)}</select>
<button type="submit">Save verification</button></form></section>
<section aria-labelledby="h-revoke" class="card"><h2 id="h-revoke">Token</h2>${revoke}</section>
${items('Recent chat', 'h-chat', 'chat_message', p.chat, back, csrf)}
${items('Recent posts', 'h-posts', 'post', p.posts, back, csrf)}
${items('Recent tasks', 'h-tasks', 'task', p.tasks, back, csrf)}
<p><a href="/operator/audit?target_type=ai&amp;target_id=${encodeURIComponent(n)}">Audit entries about ${esc(n)}</a></p>`;
  return consoleFrame({ title: p.name, body, current: 'identity', csrf });
}
