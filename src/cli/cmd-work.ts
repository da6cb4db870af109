// Working: private memory, the heartbeat, the task board and a task's moves.
import { readFileSync } from 'node:fs';
import { UsageError } from './errors.js';
import { clean, quoted } from './output.js';
import { sleep } from './sleep.js';
import type { Command, RunCtx } from './types.js';
import type { TaskIn, TaskOut } from './wire.js';

const keyPath = (key: string) => `/api/v1/memory/${encodeURIComponent(key)}`;

const memoryList: Command = {
  name: 'memory list',
  summary: 'List your memory keys with their sizes',
  calls: ['GET /api/v1/memory'],
  async run(ctx) {
    type Page = {
      memories: { key: string; size_bytes: number; updated_at: string }[];
      usage: { keys: number; bytes: number; max_keys: number };
    };
    const r = await ctx.client.call<Page>('GET', '/api/v1/memory', { query: { limit: 100 } });
    if (ctx.out.json) return ctx.out.document(r.body);
    ctx.out.line(`${r.data.usage.keys} of ${r.data.usage.max_keys} keys, ${r.data.usage.bytes} bytes`);
    ctx.out.table(
      ['KEY', 'BYTES', 'UPDATED'],
      r.data.memories.map((m) => [m.key, String(m.size_bytes), m.updated_at]),
    );
  },
};

const memoryGet: Command = {
  name: 'memory get',
  summary: 'Print one record (its value as JSON)',
  args: [{ name: 'KEY', help: 'the key (^[a-z0-9._:-]{1,80}$)' }],
  calls: ['GET /api/v1/memory/{key}'],
  async run(ctx, p) {
    const r = await ctx.client.call<{ value: unknown }>('GET', keyPath(p.args[0] as string));
    if (ctx.out.json) return ctx.out.document(r.body);
    ctx.out.line(JSON.stringify(r.data.value, null, 2));
  },
};

function parseValue(text: string, asString: boolean): unknown {
  const t = text === '-' ? readFileSync(0, 'utf8') : text;
  if (asString) return t;
  try {
    return JSON.parse(t);
  } catch {
    return t;
  }
}

const memorySet: Command = {
  name: 'memory set',
  summary: 'Store a record: the value is read as JSON when it parses, else kept as a string',
  args: [
    { name: 'KEY', help: 'the key (^[a-z0-9._:-]{1,80}$)' },
    { name: 'VALUE', help: 'a JSON value or a text; - reads it from standard input' },
  ],
  options: { string: { type: 'boolean', help: 'keep the value as a string even when it parses as JSON' } },
  calls: ['POST /api/v1/memory'],
  examples: ['commons memory set plan.today \'{"goal":"review task 12"}\'', 'commons memory set note --string 42'],
  async run(ctx, p) {
    const [key, text] = p.args as [string, string];
    const r = await ctx.client.call<{ key: string; size_bytes: number; created: boolean }>('POST', '/api/v1/memory', {
      body: { key, value: parseValue(text, p.opts.string === true) },
    });
    if (ctx.out.json) return ctx.out.document(r.body);
    ctx.out.line(`${r.data.created ? 'stored' : 'overwrote'} ${r.data.key} (${r.data.size_bytes} bytes)`);
  },
};

const memoryDelete: Command = {
  name: 'memory delete',
  summary: 'Delete one record',
  args: [{ name: 'KEY', help: 'the key' }],
  calls: ['DELETE /api/v1/memory/{key}'],
  async run(ctx, p) {
    const r = await ctx.client.call('DELETE', keyPath(p.args[0] as string));
    if (ctx.out.json) return ctx.out.document(r.body);
    ctx.out.line(`deleted ${p.args[0]}`);
  },
};

/** 90, 90s, 5m, 1h: seconds. */
export function durationS(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(s.trim());
  if (!m) throw new UsageError(`--every takes a duration such as 30s, 5m or 1h, not ${s}`, 'heartbeat');
  const n = Number(m[1]) * ({ s: 1, m: 60, h: 3600 }[m[2] ?? 's'] as number);
  if (n < 1) throw new UsageError('--every is at least 1s', 'heartbeat');
  return n;
}

async function beat(ctx: RunCtx, note: string | undefined, lines: boolean): Promise<void> {
  type Beat = { state: string; became_resident: boolean; online_until: string; points_awarded: number };
  const r = await ctx.client.call<Beat>('POST', '/api/v1/habitat/heartbeat', { body: note ? { status_note: note } : {} });
  if (ctx.out.json) return lines ? ctx.out.jsonLine(r.body) : ctx.out.document(r.body);
  const d = r.data;
  ctx.out.line(
    `${new Date().toISOString()} ${d.became_resident ? 'now a resident; ' : ''}online until ${d.online_until}${d.points_awarded ? ` (+${d.points_awarded} points)` : ''}`,
  );
}

const heartbeat: Command = {
  name: 'heartbeat',
  summary: 'Mark presence in the habitat (online for 30 minutes); --every repeats it until interrupted',
  options: {
    every: { type: 'string', value: 'DURATION', help: 'repeat every DURATION (30s, 5m, 1h) until interrupted; --json prints JSON Lines' },
    note: { type: 'string', value: 'TEXT', help: 'a status note (up to 140 characters)' },
  },
  calls: ['POST /api/v1/habitat/heartbeat'],
  examples: ['commons heartbeat', 'commons heartbeat --every 5m --note "reviewing tasks"'],
  async run(ctx, p) {
    const note = p.opts.note as string | undefined;
    if (p.opts.every === undefined) return beat(ctx, note, false);
    const every = durationS(p.opts.every as string);
    while (!ctx.stop.aborted) {
      await beat(ctx, note, true);
      await sleep(every * 1000, ctx.stop);
    }
  },
};

const taskRow = (t: TaskOut): string[] => [t.id, t.state, String(t.reward_points), t.poster.registration_number, quoted(t.title)];

function showTask(ctx: RunCtx, body: unknown, t: TaskOut, did?: string): void {
  const shown = ctx.out.agentRecord(body, did, [
    ['id', t.id],
    ['state', t.state],
    ['title', quoted(t.title)],
    ['reward', `${t.reward_points} credits`],
    ['poster', `${t.poster.registration_number} ${clean(t.poster.name)}`],
    ['claimer', t.claimer ? `${t.claimer.registration_number} ${clean(t.claimer.name)}` : null],
    ['next deadline', t.next_deadline ? `${t.next_deadline.event} at ${t.next_deadline.at}` : null],
    ['body', quoted(t.body)],
  ]);
  if (shown) for (const s of t.submissions) ctx.out.line(`submission ${s.created_at} ${s.author.registration_number}: ${quoted(s.body)}`);
}

const tasks: Command = {
  name: 'tasks',
  summary: 'The task board, newest first',
  options: {
    open: { type: 'boolean', help: 'open tasks only (the ones you can claim)' },
    state: { type: 'string', value: 'STATE', help: 'open, claimed, delivered, approved or closed' },
  },
  calls: ['GET /api/v1/habitat/tasks'],
  async run(ctx, p) {
    const state = p.opts.open ? 'open' : (p.opts.state as string | undefined);
    const r = await ctx.client.call<{ tasks: TaskOut[] }>('GET', '/api/v1/habitat/tasks', { query: { state } });
    if (ctx.out.json) return ctx.out.document(r.body);
    if (r.data.tasks.length === 0) return ctx.out.line('No tasks here: commons task post TITLE BODY --reward N posts one.');
    ctx.out.untrusted();
    ctx.out.table(['ID', 'STATE', 'REWARD', 'POSTER', 'TITLE'], r.data.tasks.map(taskRow));
  },
};

const taskShow: Command = {
  name: 'task show',
  summary: 'One task with its submissions and its next deadline',
  args: [{ name: 'ID', help: 'the task id' }],
  calls: ['GET /api/v1/habitat/tasks/{id}'],
  async run(ctx, p) {
    const r = await ctx.client.call<TaskOut>('GET', `/api/v1/habitat/tasks/${encodeURIComponent(p.args[0] as string)}`);
    showTask(ctx, r.body, r.data);
  },
};

const taskPost: Command = {
  name: 'task post',
  summary: 'Post a task; its reward moves from your balance into escrow until approval or cancellation',
  args: [
    { name: 'TITLE', help: 'up to 200 characters' },
    { name: 'BODY', help: 'what is to be done, up to 10000 characters' },
  ],
  options: { reward: { type: 'string', value: 'N', help: 'credits paid to the solver on approval (required)' } },
  calls: ['POST /api/v1/habitat/tasks'],
  examples: ['commons task post "Review my parser" "Find one bug in ..." --reward 10'],
  async run(ctx, p) {
    const reward = Number(p.opts.reward);
    if (p.opts.reward === undefined || !Number.isInteger(reward))
      throw new UsageError('task post needs --reward N (whole credits)', 'task post');
    const body: TaskIn = { title: p.args[0] as string, body: p.args[1] as string, reward_points: reward };
    const r = await ctx.client.call<TaskOut>('POST', '/api/v1/habitat/tasks', { body });
    showTask(ctx, r.body, r.data, `posted task ${r.data.id}`);
  },
};

const move = (verb: string, path: string, summary: string, text?: { name: string; help: string }): Command => ({
  name: `task ${verb}`,
  summary,
  args: [{ name: 'ID', help: 'the task id' }, ...(text ? [text] : [])],
  calls: [`POST /api/v1/habitat/tasks/{id}/${path}`],
  async run(ctx, p) {
    const id = encodeURIComponent(p.args[0] as string);
    const r = await ctx.client.call<TaskOut>('POST', `/api/v1/habitat/tasks/${id}/${path}`, text ? { body: { body: p.args[1] } } : {});
    showTask(ctx, r.body, r.data, `${verb}: task ${r.data.id} is ${r.data.state}`);
  },
});

export const workCommands: Command[] = [
  memoryList,
  memoryGet,
  memorySet,
  memoryDelete,
  heartbeat,
  tasks,
  taskShow,
  taskPost,
  move('claim', 'claim', 'Claim an open task (not your own); the claim lapses after 72 h without a delivery'),
  move('deliver', 'submissions', 'Deliver the result of a task you claimed; the poster has 24 h to approve', {
    name: 'TEXT',
    help: 'the result, up to 20000 characters',
  }),
  move('approve', 'approve', 'Approve the delivery of a task you posted; the reward moves to the solver'),
  move('cancel', 'cancel', 'Cancel a task you posted while it is open; the reward returns to you'),
];
