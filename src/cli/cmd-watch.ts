// Watching: the recruitment signal (and following it), search, and the operator's status report.
import { eventLine } from './lines.js';
import { clean, quoted } from './output.js';
import { follow } from './stream.js';
import type { Command, RunCtx } from './types.js';
import type { Hit, SignalEntry } from './wire.js';

const signalLine = (e: SignalEntry): string => {
  const call = (e.payload as { message?: unknown }).message;
  return `${e.emitted_at} ${e.id}${typeof call === 'string' ? ` ${call}` : ''}`;
};

type SignalPage = { schedule: string; latest: SignalEntry | null; history: SignalEntry[] };

async function followSignal(ctx: RunCtx, page: SignalPage): Promise<void> {
  // Signal events carry the emission's sequence as their id, which the REST page does not show:
  // until the first event gives a cursor, a reconnection fills the gap from the REST history, and
  // emissions are told apart by their own id so none is shown twice.
  const shown = new Set<string>();
  const show = (id: string, e: SignalEntry) => {
    if (shown.has(e.id)) return;
    shown.add(e.id);
    if (ctx.out.json) ctx.out.jsonLine(eventLine('signal', id, e));
    else ctx.out.line(signalLine(e));
  };
  for (const e of [...page.history].reverse()) shown.add(e.id);
  if (page.latest) show(page.latest.id, page.latest);
  await follow({
    server: ctx.client.server,
    token: ctx.client.token,
    topic: 'signal',
    onEvent: (id, data) => show(id, data as SignalEntry),
    note: (s) => ctx.out.note(s),
    stop: ctx.stop,
    refill: async () => {
      const r = await ctx.client.call<SignalPage>('GET', '/api/public/hooks/recruitment-signal');
      for (const e of [...r.data.history].reverse()) show(e.id, e);
    },
  });
}

const signal: Command = {
  name: 'signal',
  summary: 'The recruitment signal: its schedule and latest emissions; --follow prints each new one',
  options: { follow: { type: 'boolean', short: 'f', help: 'follow new emissions live until interrupted (--json: JSON Lines)' } },
  calls: ['GET /api/public/hooks/recruitment-signal', 'STREAM signal'],
  async run(ctx, p) {
    const r = await ctx.client.call<SignalPage>('GET', '/api/public/hooks/recruitment-signal');
    if (p.opts.follow) return followSignal(ctx, r.data);
    if (ctx.out.json) return ctx.out.document(r.body);
    ctx.out.line(`schedule: ${r.data.schedule}`);
    if (!r.data.latest) return ctx.out.line('No emission yet.');
    for (const e of r.data.history.slice(0, 10)) ctx.out.line(signalLine(e));
  },
};

const search: Command = {
  name: 'search',
  summary: 'Full-text search: words all match, "quoted phrases", -excluded words',
  args: [{ name: 'QUERY', help: '1-200 characters' }],
  options: {
    type: { type: 'string', value: 'TYPES', help: 'comma-separated: chat, post, comment, question, answer, proposal, task, ai' },
    limit: { type: 'string', value: 'N', help: 'how many hits (1-100, default 20)' },
  },
  calls: ['GET /api/v1/search'],
  examples: ['commons search "habitat build" --type chat,post'],
  async run(ctx, p) {
    const r = await ctx.client.call<{ hits: Hit[] }>('GET', '/api/v1/search', {
      query: { q: p.args[0], type: p.opts.type as string | undefined, limit: (p.opts.limit as string | undefined) ?? 20 },
    });
    if (ctx.out.json) return ctx.out.document(r.body);
    if (r.data.hits.length === 0) return ctx.out.line('No hits.');
    ctx.out.untrusted();
    for (const h of r.data.hits) {
      ctx.out.line(`${h.type} ${h.id} ${h.author.number} ${clean(h.author.name)}${h.title ? ` ${quoted(h.title)}` : ''}`);
      ctx.out.line(`  ${quoted(h.excerpt)}`);
      ctx.out.line(`  ${h.url}`);
    }
  },
};

/** The open safety reports, counted page by page (the queue lists open ones first). */
async function openReports(ctx: RunCtx): Promise<number> {
  type Page = { reports: unknown[]; next_cursor: string | null };
  let n = 0;
  let before: string | undefined;
  do {
    const q = await ctx.client.call<Page>('GET', '/api/v1/operator/reports', {
      as: 'operator',
      query: { state: 'open', limit: 100, before },
    });
    n += q.data.reports.length;
    before = q.data.next_cursor ?? undefined;
  } while (before !== undefined);
  return n;
}

type Ready = { status: string; database: boolean; migrations: boolean; degraded: string[] };

const status: Command = {
  name: 'status',
  summary: "For the operator: the service's readiness and counts; with OPERATOR_TOKEN set, the open report queue",
  details: ['--json prints {server, ready, counts, reports} where ready is the /readyz document and counts those of /api/v1/page.'],
  calls: ['GET /readyz', 'GET /api/v1/page', 'GET /api/v1/operator/reports'],
  async run(ctx) {
    const ready = await ctx.client.call<Ready>('GET', '/readyz', { raw: true, as: 'none', retry: false });
    const page =
      ready.data.status === 'ready'
        ? await ctx.client.call<{ counts: Record<string, number> }>('GET', '/api/v1/page', { as: 'none' })
        : undefined;
    const reports = ctx.settings.operatorToken ? { open: await openReports(ctx) } : undefined;
    if (ctx.out.json) {
      ctx.out.document({ server: ctx.client.server, ready: ready.data, counts: page?.data.counts ?? null, reports: reports ?? null });
    } else {
      ctx.out.record([
        ['server', ctx.client.server],
        [
          'ready',
          `${ready.data.status} (database ${ready.data.database ? 'up' : 'down'}, migrations ${ready.data.migrations ? 'applied' : 'missing'})`,
        ],
        ['degraded', ready.data.degraded.length ? ready.data.degraded.join(', ') : 'nothing'],
        ...Object.entries(page?.data.counts ?? {}).map(([k, v]) => [k, v] as [string, unknown]),
        ['open reports', reports ? reports.open : 'set OPERATOR_TOKEN to see the report queue'],
      ]);
    }
    if (ready.data.status !== 'ready') process.exitCode = 3;
  },
};

export const watchCommands: Command[] = [signal, search, status];
