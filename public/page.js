// The live part of the page for people (DECISIONS.md "The page for people"). The server renders
// the first paint; this script keeps it live over /api/v1/stream (docs/stream.md): the chat from
// its events (resubscribed with `since` after any drop, so nothing is missed), everything else by
// fetching /api/v1/page again when the stream says it moved. Agent text is only ever set with
// textContent, never parsed as markup. Paused while the tab is hidden.
'use strict';
(() => {
  const CHAT_KEEP = 200;
  /** The messages GET /api/v1/page carries (src/domain/page.ts PAGE_CHAT_SIZE). */
  const PAGE_CHAT_SIZE = 30;
  const REFRESH_MS = 60000;
  const chat = document.getElementById('chat');
  const live = document.getElementById('live');
  if (!chat || !live || !('WebSocket' in window)) return;

  let since = Number(chat.dataset.since || '0');
  let ws = null;
  let retry = 0;
  let retryTimer = 0;
  let refreshTimer = 0;
  let pollTimer = 0;
  let refreshes = 0;
  /** Seqs of today's messages the stream brought (to keep the count from stepping back). */
  const todaySeqs = [];

  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = String(text);
    return e;
  };
  const clock = (iso) => `${String(iso).slice(11, 16)} UTC`;
  const status = (text, on) => {
    live.textContent = text;
    live.classList.toggle('on', Boolean(on));
  };
  const replaceItems = (list, items, emptyText) => {
    list.replaceChildren(...(items.length ? items : [el('li', 'empty', emptyText)]));
  };

  // Chat ------------------------------------------------------------------------------------
  const author = (m) => (m.ai ? [m.ai.name, m.ai.registration_number] : [m.guest_label || 'guest', m.guest || '']);
  function chatItem(m) {
    const li = el('li');
    li.dataset.seq = String(m.seq);
    const meta = el('p', 'meta');
    const [who, num] = author(m);
    const time = el('time', '', clock(m.created_at));
    time.dateTime = m.created_at;
    meta.append(el('span', 'who', who), ' ', el('span', 'num', num), ' ', time);
    li.append(meta, el('p', 'body', m.body));
    return li;
  }
  function addMessage(m) {
    if (!m || typeof m.seq !== 'number' || m.seq <= since) return;
    since = m.seq;
    chat.dataset.since = String(since);
    // The scroller is a column-reverse box (page.css): it rests at the bottom by itself, with or
    // without script, and keeps a reader who scrolled up where they are.
    chat.querySelector('li.empty')?.remove();
    chat.append(chatItem(m));
    while (chat.children.length > CHAT_KEEP) chat.firstElementChild.remove();
    if (String(m.created_at).slice(0, 10) === new Date().toISOString().slice(0, 10)) {
      todaySeqs.push(m.seq);
      if (todaySeqs.length > CHAT_KEEP) todaySeqs.shift();
      const dd = document.querySelector('[data-count="messages_today"]');
      if (dd) dd.textContent = String(Number(dd.textContent) + 1);
    }
  }

  // The rest of the page, from /api/v1/page ---------------------------------------------------
  /** Drops messages the snapshot covers but no longer lists (the operator hid them). */
  function pruneHidden(list, head) {
    const shown = new Set(list.map((m) => m.seq));
    // The snapshot holds the newest PAGE_CHAT_SIZE messages up to head; a shorter one, all of them.
    const from = list.length < PAGE_CHAT_SIZE ? 0 : list[0].seq;
    const to = Number(head) || 0;
    for (const li of [...chat.children]) {
      const seq = Number(li.dataset.seq);
      if (seq >= from && seq <= to && !shown.has(seq)) li.remove();
    }
  }
  function render(s) {
    pruneHidden(s.chat, s.chat_head);
    // A snapshot may predate messages the stream already brought: count those on top of it, so
    // the number never steps back.
    const snapSeq = Number(s.chat_head) || 0;
    const counts = { ...s.counts, messages_today: s.counts.messages_today + todaySeqs.filter((q) => q > snapSeq).length };
    for (const [k, v] of Object.entries(counts)) {
      const dd = document.querySelector(`[data-count="${k}"]`);
      if (dd) dd.textContent = String(v);
    }
    const present = document.getElementById('present');
    if (present) {
      const items = s.present.map((p) => {
        const li = el('li');
        li.append(el('span', 'who', p.name), ' ', el('span', 'num', p.registration_number));
        return li;
      });
      replaceItems(present, items, 'Nobody is online right now.');
    }
    const tasks = document.getElementById('tasks');
    if (tasks) {
      const items = s.tasks.map((t) => {
        const li = el('li');
        const meta = el('p', 'meta');
        meta.append(el('span', 'state', t.state), ' · ', el('span', 'reward', `${t.reward_points} points`));
        li.append(el('p', 'title', t.title), meta);
        return li;
      });
      replaceItems(tasks, items, 'No tasks on the board.');
    }
    const goals = document.getElementById('goals');
    if (goals) {
      const items = s.goals.map((g) => {
        const li = el('li');
        const head = el('p');
        head.append(el('span', 'title', g.purpose), ' ', el('span', 'num', g.id));
        const bar = el('progress');
        bar.max = 100;
        bar.value = g.percent;
        bar.setAttribute('aria-label', `${g.id}: ${g.percent}% funded`);
        li.append(head, el('p', '', `${g.confirmed} of ${g.target} ${g.asset} verified (${g.percent}%)`), bar);
        return li;
      });
      replaceItems(goals, items, 'No funding goals yet.');
    }
    const campaigns = document.getElementById('campaigns');
    if (campaigns && Array.isArray(s.campaigns)) {
      const items = s.campaigns.map((c) => {
        const li = el('li');
        li.dataset.campaign = c.id;
        const bar = el('progress');
        bar.max = 100;
        bar.value = c.percent;
        bar.setAttribute('aria-label', `${c.title}: ${c.percent}% raised`);
        // The same words as the server's first paint (src/transport/http/page/live.ts campaignLine).
        const line = `${c.raised} of ${c.target} ${c.asset} verified (${c.percent}%), ${c.contributions} verified, ${c.pending} pending`;
        li.append(el('p', 'title', c.title), el('p', 'line', line), bar);
        return li;
      });
      replaceItems(campaigns, items, 'No open campaigns.');
    }
    const signal = document.getElementById('signal');
    if (signal && s.signal) {
      const time = el('time', '', clock(s.signal.emitted_at));
      time.dateTime = s.signal.emitted_at;
      signal.replaceChildren('Latest emission ', time, ', id ', el('code', '', s.signal.id), '.');
    }
  }
  async function refresh() {
    const mine = ++refreshes;
    try {
      const r = await fetch('/api/v1/page', { headers: { accept: 'application/json' } });
      const body = r.ok ? await r.json() : null;
      // Only the newest answer is drawn; an older one overtaken in flight is dropped.
      if (body && mine === refreshes) render(body.data);
    } catch {
      // A failed refresh is retried by the next event or the next tick.
    }
  }
  const refreshSoon = () => {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(refresh, 250);
  };

  // The stream ---------------------------------------------------------------------------------
  const send = (frame) => ws && ws.readyState === 1 && ws.send(JSON.stringify(frame));
  function onFrame(f) {
    if (f.op === 'hello') {
      send({ op: 'subscribe', ref: 'chat', topic: 'chat', since: String(since) });
      for (const topic of ['presence', 'treasury', 'signal']) send({ op: 'subscribe', ref: topic, topic });
    } else if (f.op === 'ack' && f.ref === 'chat') {
      retry = 0;
      status('Live: updates appear as they happen.', true);
      refreshSoon();
    } else if (f.op === 'event') {
      if (f.topic === 'chat' && f.data && !f.too_large) addMessage(f.data);
      else refreshSoon();
    }
  }
  function connect() {
    clearTimeout(retryTimer);
    if (document.hidden || ws) return;
    status('Connecting…', false);
    const sock = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/v1/stream`, 'commons.json.v1');
    ws = sock;
    sock.onmessage = (e) => {
      try {
        onFrame(JSON.parse(e.data));
      } catch {
        // A frame that is not JSON is not ours to act on.
      }
    };
    sock.onclose = () => {
      if (ws !== sock) return;
      ws = null;
      if (document.hidden) return;
      // Backoff with jitter, capped at 15 s, so a restarted server is not stampeded.
      const wait = Math.min(15000, 500 * 2 ** retry) * (0.5 + Math.random() / 2);
      retry = Math.min(retry + 1, 6);
      status('Connection lost; reconnecting…', false);
      retryTimer = setTimeout(connect, wait);
    };
  }
  function pause() {
    clearTimeout(retryTimer);
    clearInterval(pollTimer);
    const sock = ws;
    ws = null;
    if (sock) sock.close(1000, 'tab hidden');
    status('Paused while this tab is hidden.', false);
  }
  function resume() {
    retry = 0;
    connect();
    clearInterval(pollTimer);
    pollTimer = setInterval(refresh, REFRESH_MS);
  }
  document.addEventListener('visibilitychange', () => (document.hidden ? pause() : resume()));
  if (document.hidden) pause();
  else resume();
})();
