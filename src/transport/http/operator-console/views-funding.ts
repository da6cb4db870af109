// Funding goals (set status) and disbursements (record one, attach a transaction hash). Amounts
// are the exact decimal strings of the treasury document and the disbursement records, never
// floating-point numbers.
import { GOAL_STATUSES } from '../../../domain/operator.js';
import { backField, consoleFrame, csrfField, esc, when } from './html.js';

export interface GoalData {
  id: string;
  purpose: string;
  asset: string;
  priority: number;
  status: string;
  target_amount_exact: string;
  confirmed_amount_exact: string;
  remaining_amount_exact: string;
}

export interface DisbursementData {
  id: string;
  asset: string;
  amount: string;
  to_address: string;
  purpose: string;
  goal_id: string | null;
  tx_hash: string | null;
  approved_at: string;
}

const BACK = '/operator/funding';

function goal(g: GoalData, csrf: string): string {
  const opts = GOAL_STATUSES.map((s) => `<option value="${s}"${s === g.status ? ' selected' : ''}>${s}</option>`).join('');
  return `<li class="card" id="goal-${esc(g.id)}">
<h3>${esc(g.id)} <span class="tag">${esc(g.status)}</span></h3>
<p>${esc(g.purpose)}</p>
<dl class="facts"><div><dt>Target</dt><dd>${esc(g.target_amount_exact)} ${esc(g.asset)}</dd></div>
<div><dt>Confirmed</dt><dd>${esc(g.confirmed_amount_exact)} ${esc(g.asset)}</dd></div>
<div><dt>Remaining</dt><dd>${esc(g.remaining_amount_exact)} ${esc(g.asset)}</dd></div></dl>
<form method="post" action="/operator/funding-goals/${esc(g.id)}/status" class="inline-form">${csrfField(csrf)}${backField(BACK)}
<label for="gs-${esc(g.id)}">Status</label><select id="gs-${esc(g.id)}" name="status">${opts}</select>
<button type="submit">Set status</button></form></li>`;
}

function disbursement(d: DisbursementData, csrf: string): string {
  const tx = d.tx_hash
    ? `<p>Transaction <code class="wrap">${esc(d.tx_hash)}</code></p>`
    : `<form method="post" action="/operator/disbursements/${esc(d.id)}/tx" class="inline-form">${csrfField(csrf)}${backField(BACK)}
<label for="tx-${esc(d.id)}">Transaction hash</label><input id="tx-${esc(d.id)}" name="tx_hash" required maxlength="66" autocomplete="off" spellcheck="false">
<button type="submit">Attach</button></form>`;
  return `<li class="card" id="disb-${esc(d.id)}">
<p><strong>${esc(d.amount)} ${esc(d.asset)}</strong> to <code class="wrap">${esc(d.to_address)}</code>${d.goal_id ? ` for <a href="#goal-${esc(d.goal_id)}">${esc(d.goal_id)}</a>` : ''}</p>
<p>${esc(d.purpose)}</p><p class="meta">Approved ${when(d.approved_at)}</p>${tx}</li>`;
}

function recordForm(goals: GoalData[], csrf: string): string {
  const goalOpts = goals.map((g) => `<option value="${esc(g.id)}">${esc(g.id)} (${esc(g.asset)})</option>`).join('');
  return `<form method="post" action="/operator/disbursements" class="stack">${csrfField(csrf)}${backField(BACK)}
<label for="d-asset">Asset</label><select id="d-asset" name="asset"><option>ETH</option><option>BTC</option></select>
<label for="d-amount">Amount (exact decimal, e.g. 0.05)</label><input id="d-amount" name="amount" required inputmode="decimal" pattern="[0-9]+(\\.[0-9]+)?" autocomplete="off">
<label for="d-to">To address</label><input id="d-to" name="to_address" required maxlength="100" autocomplete="off" spellcheck="false">
<label for="d-purpose">Purpose</label><input id="d-purpose" name="purpose" required maxlength="2000" autocomplete="off">
<label for="d-goal">Funding goal (optional)</label><select id="d-goal" name="goal_id"><option value="">none</option>${goalOpts}</select>
<label for="d-tx">Transaction hash (optional, can be attached later)</label><input id="d-tx" name="tx_hash" maxlength="66" autocomplete="off" spellcheck="false">
<button type="submit">Record disbursement</button></form>`;
}

export function fundingPage(goals: GoalData[], disbursements: DisbursementData[], csrf: string): string {
  const list = disbursements.length
    ? disbursements.map((d) => disbursement(d, csrf)).join('\n')
    : '<li class="empty">No disbursements recorded.</li>';
  const body = `<h1>Funding</h1>
<section aria-labelledby="h-goals"><h2 id="h-goals">Funding goals</h2><ul class="plain items">${goals.map((g) => goal(g, csrf)).join('\n')}</ul></section>
<section aria-labelledby="h-record" class="card"><h2 id="h-record">Record a disbursement</h2>
<p class="hint">The service never signs or sends a transaction: this records one you approved.</p>${recordForm(goals, csrf)}</section>
<section aria-labelledby="h-disb"><h2 id="h-disb">Disbursements, newest first</h2><ul class="plain items">${list}</ul></section>`;
  return consoleFrame({ title: 'Funding', body, current: 'funding', csrf });
}
