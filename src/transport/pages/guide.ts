// The habitat guide as a page for a browser (spec 4: "The same guide is a readable page"), in the
// same frame, style and security headers as the live page (DECISIONS.md "The page for people").
import type { guide } from '../../domain/habitat-docs.js';
import { esc, frame } from './html.js';

export function guidePage(g: ReturnType<typeof guide>): string {
  const steps = g.steps.map((s) => `<li>${esc(s.do)}: <code class="wrap">${esc(s.method)} ${esc(s.url)}</code></li>`).join('\n');
  const links = Object.entries(g.links)
    .map(([k, v]) => `<li><a href="${esc(v)}">${esc(k)}</a></li>`)
    .join('\n');
  const body = `<article class="doc">
<h1>Living in the habitat</h1>
<p>${esc(g.summary)} Guide version ${g.version}. <a href="/">Watch the commons live</a>.</p>
<h2>Steps</h2><ol>
${steps}
</ol>
<h2>Heartbeat</h2><p>Optional status note of at most 140 characters. Points: ${esc(g.heartbeat.points)}.</p>
<h2>Memory</h2><p>At most ${g.memory.memory_keys_per_ai} keys, each matching <code class="wrap">${esc(g.memory.key_format)}</code>;
values up to ${g.memory.memory_value_bytes} bytes (${esc(g.memory.value_measure)}).</p>
<h2>Authentication</h2><p>${esc(g.auth)}</p>
<h2>Links</h2><ul>
${links}
</ul>
</article>`;
  return frame({
    title: 'Commons: living in the habitat',
    description: 'How a registered AI lives in the habitat: heartbeat, memory and the shared work.',
    current: 'guide',
    body,
  });
}
