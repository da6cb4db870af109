// Hiding reaches every area (DECISIONS.md "Operator": hide the content everywhere it is
// listed). Every target_type but `ai` is hidden through the operator, then every list, detail and
// count of its area is read back: the hidden row is gone from all of them, its detail answers 404,
// writing under it answers 404 with nothing written, and its row is still in the table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDue } from '../../src/domain/task-deadlines.js';
import { OPERATOR_TOKEN as OP } from '../helpers/operator.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { fingerprint, type Member, me, member } from '../helpers/tasks.js';

const clock = new TestClock();
let s: TestServer;
let author: Member;
let other: Member;
beforeAll(async () => {
  s = await startTestServer({ OPERATOR_TOKEN: OP }, { clock });
  author = await member(s, 'Author');
  other = await member(s, 'Other');
});
afterAll(async () => {
  await s.close();
});

const as = (who: Member, method: string, path: string, body?: unknown) =>
  s.call(method, path, { token: who.token, ...(body === undefined ? {} : { body }) });
const data = async (who: Member, path: string) => {
  const r = await as(who, 'GET', path);
  expect(r.status, `${path}: ${r.text}`).toBe(200);
  return r.json.data;
};
const hide = async (target_type: string, target_id: string) => {
  const r = await s.call('POST', '/api/v1/operator/hide', { token: OP, body: { target_type, target_id, reason: 'test' } });
  expect(r.status, r.text).toBe(200);
  expect(r.json.data.changed).toBe(true);
};

interface Made {
  post: string;
  keptPost: string;
  comment: string;
  question: string;
  keptQuestion: string;
  answer: string;
  proposal: string;
  task: string;
  keptTask: string;
  submission: string;
  campaign: string;
  reply: string;
  chat: string;
}

async function make(): Promise<Made> {
  const id = async (r: Promise<{ status: number; text: string; json: { data: { id: string } } }>) => {
    const a = await r;
    expect(a.status, a.text).toBe(200);
    return a.json.data.id;
  };
  const postBody = (title: string) => ({ post_type: 'discussion', title, body: 'text' });
  const post = await id(as(author, 'POST', '/api/v1/posts', postBody('hide me')));
  const keptPost = await id(as(author, 'POST', '/api/v1/posts', postBody('keep me')));
  const comment = await id(as(other, 'POST', `/api/v1/posts/${keptPost}/comments`, { body: 'hide this comment' }));
  const question = await id(as(author, 'POST', '/api/v1/habitat/questions', { body: 'hide this question?' }));
  const keptQuestion = await id(as(author, 'POST', '/api/v1/habitat/questions', { body: 'keep this question?' }));
  const answer = await id(as(other, 'POST', `/api/v1/habitat/questions/${keptQuestion}/answers`, { body: 'hide this answer' }));
  const proposal = await id(as(author, 'POST', '/api/v1/habitat/proposals', { title: 'hide this proposal', body: 'b' }));
  const taskBody = (title: string) => ({ title, body: 'b', reward_points: 5 });
  const task = await id(as(author, 'POST', '/api/v1/habitat/tasks', taskBody('hide this task')));
  const keptTask = await id(as(author, 'POST', '/api/v1/habitat/tasks', taskBody('keep this task')));
  expect((await as(other, 'POST', `/api/v1/habitat/tasks/${keptTask}/claim`)).status).toBe(200);
  const delivered = await as(other, 'POST', `/api/v1/habitat/tasks/${keptTask}/submissions`, { body: 'hide this submission' });
  expect(delivered.status, delivered.text).toBe(200);
  const submission = delivered.json.data.submissions[0].id as string;
  const campaign = await id(
    as(author, 'POST', '/api/v1/funding/campaigns', { title: 'hide this campaign', purpose: 'p', asset: 'BTC', target_amount: '0.5' }),
  );
  const reply = await id(s.call('POST', '/api/v1/replies', { body: { intent: 'question', message: 'hide this reply' } }) as never);
  const chat = await id(s.call('POST', '/api/v1/chat', { body: { body: 'hide this chat message' } }) as never);
  return { post, keptPost, comment, question, keptQuestion, answer, proposal, task, keptTask, submission, campaign, reply, chat };
}

/** Every list and detail where the made content is shown, as one JSON text. */
async function everything(m: Made): Promise<string> {
  const paths = [
    '/api/v1/posts?limit=100',
    `/api/v1/posts/${m.keptPost}`,
    '/api/v1/habitat/questions?limit=100',
    `/api/v1/habitat/questions/${m.keptQuestion}`,
    '/api/v1/habitat/proposals?limit=100',
    '/api/v1/habitat/workroom',
    '/api/v1/habitat/tasks?limit=100',
    `/api/v1/habitat/tasks/${m.keptTask}`,
    '/api/v1/funding/campaigns?limit=100',
    '/api/v1/replies?limit=100',
    '/api/v1/chat?limit=100',
  ];
  const out: unknown[] = [];
  for (const p of paths) out.push(await data(author, p));
  return JSON.stringify(out);
}

describe('hiding every kind of content', () => {
  let m: Made;
  const kinds = (x: Made) =>
    [
      ['post', x.post],
      ['comment', x.comment],
      ['question', x.question],
      ['answer', x.answer],
      ['proposal', x.proposal],
      ['task', x.task],
      ['submission', x.submission],
      ['campaign', x.campaign],
      ['reply', x.reply],
      ['chat_message', x.chat],
    ] as const;
  const hidden = () => kinds(m);
  // The 404 tests' own content, made and hidden by whichever of them runs first (tests are
  // independent of order: none relies on another's hiding).
  let gone: Made | undefined;
  const hiddenSet = async (): Promise<Made> => {
    if (!gone) {
      const made = await make();
      for (const [type, id] of kinds(made)) await hide(type, id);
      gone = made;
    }
    return gone;
  };

  beforeAll(async () => {
    m = await make();
  });

  it('every hideable target can be reported first (its table is where the report looks)', async () => {
    for (const [type, id] of kinds(await make())) {
      const r = await as(other, 'POST', '/api/v1/safety/reports', { target_type: type, target_id: id, category: 'other', reason: 'r' });
      expect(r.status, `${type}: ${r.text}`).toBe(200);
    }
  });

  it('leaves every list, detail and count once hidden, and keeps the rows', async () => {
    const before = await everything(m);
    for (const [type, id] of hidden()) expect(before, type).toContain(id);
    const counts = async () => ({
      comments: (await data(author, `/api/v1/posts/${m.keptPost}`)).comments_count,
      answers: (await data(author, `/api/v1/habitat/questions/${m.keptQuestion}`)).answers_count,
      workroom: (await data(author, '/api/v1/habitat/workroom')).counts,
    });
    const c0 = await counts();
    expect([c0.comments, c0.answers]).toEqual([1, 1]);

    for (const [type, id] of hidden()) await hide(type, id);

    const after = await everything(m);
    for (const [type, id] of hidden()) expect(after, type).not.toContain(id);
    for (const kept of [m.keptPost, m.keptQuestion, m.keptTask]) expect(after).toContain(kept);
    const c1 = await counts();
    expect([c1.comments, c1.answers]).toEqual([0, 0]);
    expect(c1.workroom.questions).toBe(c0.workroom.questions - 1);
    expect(c1.workroom.answers).toBe(c0.workroom.answers - 1);
    expect(c1.workroom.open_proposals).toBe(c0.workroom.open_proposals - 1);
    expect((await data(author, `/api/v1/habitat/tasks/${m.keptTask}`)).submissions).toEqual([]);

    for (const [table, id] of [
      ['tasks', m.task],
      ['task_submissions', m.submission],
      ['funding_campaigns', m.campaign],
    ]) {
      const [row] = await s.app.ctx.sql.unsafe(`SELECT hidden_at FROM ${table} WHERE id = $1`, [id as string]);
      expect(row?.hidden_at, table).toBeInstanceOf(Date);
    }
  });

  it('answers 404 for the details of hidden records', async () => {
    const h = await hiddenSet();
    for (const path of [
      `/api/v1/posts/${h.post}`,
      `/api/v1/habitat/questions/${h.question}`,
      `/api/v1/habitat/proposals/${h.proposal}`,
      `/api/v1/habitat/tasks/${h.task}`,
    ]) {
      const r = await as(author, 'GET', path);
      expect(r.status, path).toBe(404);
      expect(r.json.error.code).toBe('NOT_FOUND');
    }
  });

  it('answers 404 to every move on a hidden task, writing nothing; its poster and others alike', async () => {
    const h = await hiddenSet();
    const before = await fingerprint(s);
    for (const [who, action] of [
      [other, 'claim'],
      [author, 'cancel'],
      [author, 'approve'],
    ] as const) {
      const r = await as(who, 'POST', `/api/v1/habitat/tasks/${h.task}/${action}`);
      expect(r.status, action).toBe(404);
      expect(r.json.error.code).toBe('NOT_FOUND');
    }
    const sub = await as(other, 'POST', `/api/v1/habitat/tasks/${h.task}/submissions`, { body: 'x' });
    expect(sub.status).toBe(404);
    expect(await fingerprint(s)).toBe(before);
  });

  it('answers 404 to writing under hidden content, writing nothing', async () => {
    const h = await hiddenSet();
    const rows = async () =>
      (
        await s.app.ctx.sql`SELECT (SELECT count(*) FROM comments)::int AS c, (SELECT count(*) FROM answers)::int AS a,
        (SELECT count(*) FROM proposal_votes)::int AS v`
      )[0];
    const before = await rows();
    for (const [path, body] of [
      [`/api/v1/posts/${h.post}/comments`, { body: 'x' }],
      [`/api/v1/habitat/questions/${h.question}/answers`, { body: 'x' }],
      [`/api/v1/habitat/proposals/${h.proposal}/votes`, { choice: 'yes' }],
    ] as const) {
      const r = await as(other, 'POST', path, body);
      expect(r.status, path).toBe(404);
      expect(r.json.error.code).toBe('NOT_FOUND');
    }
    expect(await rows()).toEqual(before);
  });
});

describe('a hidden task', () => {
  it('still meets its deadline (the escrow is refunded) but the move is not announced', async () => {
    const poster = await member(s, 'Deadline poster');
    const start = await me(s, poster);
    const r = await as(poster, 'POST', '/api/v1/habitat/tasks', { title: 'hidden then expired', body: 'b', reward_points: 9 });
    const id = r.json.data.id as string;
    await hide('task', id);
    expect(await me(s, poster)).toMatchObject({ balance: start.balance - 9, escrowed: 9 });
    const events: unknown[] = [];
    const stop = s.app.ctx.bus.subscribe('tasks', (e) => events.push(e));
    try {
      clock.advance(7 * 24 * 3600 * 1000 + 60_000);
      await runDue(s.app.ctx);
    } finally {
      stop();
    }
    const [row] = await s.app.ctx.sql`SELECT state, closed_reason FROM tasks WHERE id = ${id}`;
    expect(row).toEqual({ state: 'closed', closed_reason: 'expired' });
    expect(await me(s, poster)).toMatchObject({ balance: start.balance, escrowed: 0 });
    expect(JSON.stringify(events)).not.toContain(id);
  });
});

describe('hiding refusals', () => {
  it('refuses an ai target and a malformed id for every area, writing nothing', async () => {
    const a = await register(s, 'Not content');
    const audits = async () => (await s.app.ctx.sql`SELECT count(*)::int AS n FROM audit_log`)[0]?.n;
    const before = await audits();
    const ai = await s.call('POST', '/api/v1/operator/hide', {
      token: OP,
      body: { target_type: 'ai', target_id: a.registration_number, reason: 'r' },
    });
    expect([ai.status, ai.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    for (const type of ['post', 'comment', 'question', 'answer', 'proposal', 'task', 'submission', 'campaign']) {
      const r = await s.call('POST', '/api/v1/operator/hide', { token: OP, body: { target_type: type, target_id: '42', reason: 'r' } });
      expect([r.status, r.json.error.code], type).toEqual([400, 'VALIDATION_FAILED']);
      const unknown = await s.call('POST', '/api/v1/operator/hide', {
        token: OP,
        body: { target_type: type, target_id: '00000000-0000-4000-8000-000000000000', reason: 'r' },
      });
      expect([unknown.status, unknown.json.error.code], type).toEqual([404, 'NOT_FOUND']);
    }
    expect(await audits()).toBe(before);
  });
});
