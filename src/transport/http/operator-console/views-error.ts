// A refused console action: what the operator API said, as text, and the way back.
import type { CommonsError } from '../../../domain/errors.js';
import { consoleFrame, esc } from './html.js';

export function errorPage(err: CommonsError, back: string, csrf: string): string {
  const fields = (err.fields ?? []).map((f) => `<li><code>${esc(f.path)}</code>: ${esc(f.message)}</li>`).join('');
  const body = `<h1>The action was refused</h1>
<p role="alert" class="error">${esc(err.message)} <span class="num">(${esc(err.code)})</span></p>
${fields ? `<ul>${fields}</ul>` : ''}
<p>Nothing was changed. <a href="${esc(back)}">Back</a></p>`;
  return consoleFrame({ title: 'Refused', body, csrf });
}
