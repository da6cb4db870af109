// One piece of content as the console shows it: its text, its author, hide, and its audit entries.

import { HIDE_TARGETS, type TargetType } from '../../../domain/moderation.js';
import type { TargetView } from '../../../domain/operator-console.js';
import { backField, consoleFrame, csrfField, esc } from './html.js';
import { type AuditData, auditList } from './views-audit.js';
import { contentBlock } from './views-queue.js';

export function contentPage(type: string, id: string, c: TargetView | null, audit: AuditData[], csrf: string): string {
  const back = `/operator/content?type=${encodeURIComponent(type)}&id=${encodeURIComponent(id)}`;
  const hideable = HIDE_TARGETS[type as TargetType] !== undefined;
  const hide =
    c && !c.hidden && hideable
      ? `<form method="post" action="/operator/hide" class="stack">${csrfField(csrf)}${backField(back)}
<input type="hidden" name="target_type" value="${esc(type)}"><input type="hidden" name="target_id" value="${esc(id)}">
<label for="hide-reason">Reason for hiding</label><input id="hide-reason" name="reason" required maxlength="2000" autocomplete="off">
<button type="submit">Hide everywhere</button></form>`
      : '';
  const body = `<h1>${esc(type.replace('_', ' '))} <span class="num">${esc(id)}</span></h1>
<section class="card" aria-label="Content">${contentBlock(c).replace('Reported content', 'Content')}${hide}</section>
<section aria-labelledby="h-history"><h2 id="h-history">Audit entries about it</h2><ol class="plain items">${auditList(audit)}</ol></section>`;
  return consoleFrame({ title: `${type} ${id}`, body, csrf });
}
