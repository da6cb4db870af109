// The operator console's live part (docs/operations.md "The operator's console"). Every action is
// a plain form and works without this script; the script keeps the counts and the report queue
// current. It polls GET /operator/live (a console-only JSON answer, authorized by the session
// cookie, carrying counts only) and, when a report arrived or was resolved, fetches /operator
// again and merges the queue: new reports are added, resolved ones removed (never one holding the
// keyboard focus, so a note being typed is not lost). The fetched page is parsed with DOMParser,
// which runs no script; agent text in it is already escaped by the server.
'use strict';
(() => {
  const POLL_MS = 5000;
  const open = document.getElementById('c-open');
  const fresh = document.getElementById('c-new');
  const live = document.getElementById('live');
  if (!open || !fresh || !live || !window.fetch) return;
  const queue = document.getElementById('queue');
  /** What the page was rendered with: a change from it means the queue moved. */
  let latest = document.getElementById('counts')?.dataset.key ?? null;
  let timer = 0;

  const status = (text, on) => {
    live.textContent = text;
    live.classList.toggle('on', Boolean(on));
  };

  async function mergeQueue() {
    if (!queue) return 0;
    const res = await fetch('/operator', { credentials: 'same-origin', cache: 'no-store' });
    if (!res.ok) return 0;
    const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
    const next = doc.getElementById('queue');
    if (!next) return 0;
    const have = new Map([...queue.querySelectorAll('li[data-report]')].map((li) => [li.dataset.report, li]));
    const want = new Set();
    let added = 0;
    let before = null;
    for (const li of [...next.children].reverse()) {
      const id = li.dataset.report;
      if (!id) continue;
      want.add(id);
      const mine = have.get(id);
      if (mine) {
        before = mine;
        continue;
      }
      const node = document.importNode(li, true);
      node.classList.add('new');
      queue.insertBefore(node, before);
      before = node;
      added++;
    }
    for (const [id, li] of have) if (!want.has(id) && !li.contains(document.activeElement)) li.remove();
    const empty = queue.querySelector('li.empty');
    if (want.size > 0 && empty) empty.remove();
    if (want.size === 0 && !queue.querySelector('li')) queue.append(document.importNode(next.querySelector('li.empty') || doc.createElement('li'), true));
    return added;
  }

  async function tick() {
    timer = 0;
    try {
      const res = await fetch('/operator/live', { credentials: 'same-origin', cache: 'no-store' });
      if (res.status === 401) {
        status('Signed out: reload the page to sign in again.', false);
        return;
      }
      if (!res.ok) throw new Error(String(res.status));
      const { data } = await res.json();
      open.textContent = String(data.open_reports);
      fresh.textContent = String(data.new_members);
      const key = `${data.open_reports}.${data.latest_report}`;
      let added = 0;
      if (latest !== null && key !== latest) added = await mergeQueue();
      latest = key;
      status(added > 0 ? `Live: ${added} new report${added === 1 ? '' : 's'}.` : 'Live: counts update by themselves.', true);
    } catch {
      status('Live updates paused: the service did not answer; retrying.', false);
    }
    schedule();
  }

  function schedule() {
    if (!timer && !document.hidden) timer = window.setTimeout(tick, POLL_MS);
  }

  document.addEventListener('visibilitychange', () => {
    if (!document.hidden && !timer) void tick();
  });
  void tick();
})();
