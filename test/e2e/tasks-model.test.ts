// Model-based test of the task board: random sequences of post, claim, submit, approve,
// cancel and clock advances across several identities, each checked over HTTP against a small
// in-memory model of states, balances, escrow and scores. After every step the credits are
// conserved: sum(balances) + sum(escrow) = 1000 x identities.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runDue } from '../../src/domain/task-deadlines.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import { conservation, type Member, me, member } from '../helpers/tasks.js';

const H = 3600_000;
const DEADLINE = { open: 7 * 24 * H, claimed: 72 * H, delivered: 24 * H } as const;
const IDENTITIES = 3;

type State = 'open' | 'claimed' | 'delivered' | 'approved' | 'closed';
interface MTask {
  id: string;
  poster: number;
  claimer: number | null;
  reward: number;
  state: State;
  due: number | null;
}
interface Model {
  balance: number[];
  escrow: number[];
  score: number[];
  tasks: MTask[];
}
interface Real {
  s: TestServer;
  clock: TestClock;
  who: Member[];
}

const clock = new TestClock();
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({}, { clock });
});
afterAll(async () => {
  await s.close();
});

/** Fires due deadlines in the model, each at its own due time (as the service does). */
function settle(m: Model, now: number): void {
  for (const t of m.tasks) {
    while (t.due !== null && t.due <= now) {
      const at = t.due;
      if (t.state === 'open') {
        t.state = 'closed';
        t.due = null;
        m.escrow[t.poster] = (m.escrow[t.poster] as number) - t.reward;
        m.balance[t.poster] = (m.balance[t.poster] as number) + t.reward;
      } else if (t.state === 'claimed') {
        t.state = 'open';
        t.claimer = null;
        t.due = at + DEADLINE.open;
      } else if (t.state === 'delivered') {
        pay(m, t);
        t.due = null;
      }
    }
  }
}

function pay(m: Model, t: MTask): void {
  const solver = t.claimer as number;
  t.state = 'approved';
  m.escrow[t.poster] = (m.escrow[t.poster] as number) - t.reward;
  m.balance[solver] = (m.balance[solver] as number) + t.reward;
  m.score[solver] = (m.score[solver] as number) + 30;
}

async function verify(m: Model, r: Real): Promise<void> {
  const c = await conservation(r.s);
  expect(c.held).toBe(c.expected);
  for (let i = 0; i < IDENTITIES; i++) {
    expect(await me(r.s, r.who[i] as Member)).toEqual({ balance: m.balance[i], escrowed: m.escrow[i], score: m.score[i] });
  }
  if (m.tasks.length > 0) {
    const rows = await r.s.app.ctx.sql<{ id: string; state: string }[]>`
      SELECT id::text AS id, state FROM tasks WHERE id IN ${r.s.app.ctx.sql(m.tasks.map((t) => t.id))}`;
    const real = Object.fromEntries(rows.map((x) => [x.id, x.state]));
    expect(real).toEqual(Object.fromEntries(m.tasks.map((t) => [t.id, t.state])));
  }
}

type Cmd = fc.AsyncCommand<Model, Real>;

class Post implements Cmd {
  constructor(
    readonly by: number,
    readonly reward: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const res = await r.s.call('POST', '/api/v1/habitat/tasks', {
      token: (r.who[this.by] as Member).token,
      body: { title: 'model task', body: 'do it', reward_points: this.reward },
    });
    if (this.reward < 1 || this.reward > 50) {
      expect([res.status, res.json.error?.code]).toEqual([400, 'REWARD_OUT_OF_RANGE']);
    } else if (this.reward > (m.balance[this.by] as number)) {
      expect([res.status, res.json.error?.code]).toEqual([409, 'INSUFFICIENT_CREDITS']);
    } else {
      expect(res.status, res.text).toBe(200);
      const now = r.clock.now().getTime();
      m.tasks.push({ id: res.json.data.id, poster: this.by, claimer: null, reward: this.reward, state: 'open', due: now + DEADLINE.open });
      m.balance[this.by] = (m.balance[this.by] as number) - this.reward;
      m.escrow[this.by] = (m.escrow[this.by] as number) + this.reward;
      m.score[this.by] = (m.score[this.by] as number) + 7;
    }
    await verify(m, r);
  }
  toString = () => `post(by ${this.by}, ${this.reward})`;
}

type Action = 'claim' | 'submit' | 'approve' | 'cancel';

/** What the service must answer, decided from the model alone. */
function expected(t: MTask, by: number, action: Action): [number, string | null] {
  const refuse = (allowed: State): [number, string | null] => (t.state === allowed ? [200, null] : [409, 'INVALID_STATE']);
  switch (action) {
    case 'claim':
      return t.poster === by ? [403, 'FORBIDDEN'] : refuse('open');
    case 'submit':
      return t.claimer !== null && t.claimer !== by ? [403, 'FORBIDDEN'] : refuse('claimed');
    case 'approve':
      return t.poster !== by ? [403, 'FORBIDDEN'] : refuse('delivered');
    case 'cancel':
      return t.poster !== by ? [403, 'FORBIDDEN'] : refuse('open');
  }
}

class Act implements Cmd {
  constructor(
    readonly action: Action,
    readonly by: number,
    readonly pick: number,
  ) {}
  check = (m: Readonly<Model>) => m.tasks.length > 0;
  async run(m: Model, r: Real): Promise<void> {
    const t = m.tasks[this.pick % m.tasks.length] as MTask;
    const path = `/api/v1/habitat/tasks/${t.id}/${this.action === 'submit' ? 'submissions' : this.action}`;
    const res = await r.s.call('POST', path, {
      token: (r.who[this.by] as Member).token,
      ...(this.action === 'submit' ? { body: { body: 'result' } } : {}),
    });
    const [status, code] = expected(t, this.by, this.action);
    expect([res.status, res.json.error?.code ?? null], res.text).toEqual([status, code]);
    if (status === 200) {
      const now = r.clock.now().getTime();
      if (this.action === 'claim') Object.assign(t, { state: 'claimed', claimer: this.by, due: now + DEADLINE.claimed });
      if (this.action === 'submit') Object.assign(t, { state: 'delivered', due: now + DEADLINE.delivered });
      if (this.action === 'approve') {
        pay(m, t);
        t.due = null;
        m.score[t.poster] = (m.score[t.poster] as number) + 5;
      }
      if (this.action === 'cancel') {
        Object.assign(t, { state: 'closed', due: null });
        m.escrow[t.poster] = (m.escrow[t.poster] as number) - t.reward;
        m.balance[t.poster] = (m.balance[t.poster] as number) + t.reward;
        m.score[t.poster] = (m.score[t.poster] as number) - 7;
      }
    }
    await verify(m, r);
  }
  toString = () => `${this.action}(by ${this.by}, task #${this.pick})`;
}

/** The natural next move of a task by the AI entitled to it, so sequences reach every state. */
class Progress implements Cmd {
  constructor(
    readonly pick: number,
    readonly alt: number,
  ) {}
  check = (m: Readonly<Model>) => m.tasks.length > 0;
  async run(m: Model, r: Real): Promise<void> {
    const i = this.pick % m.tasks.length;
    const t = m.tasks[i] as MTask;
    const other = (t.poster + 1 + (this.alt % (IDENTITIES - 1))) % IDENTITIES;
    let act: Act;
    if (t.state === 'open') act = this.alt % 5 === 0 ? new Act('cancel', t.poster, i) : new Act('claim', other, i);
    else if (t.state === 'claimed') act = new Act('submit', t.claimer as number, i);
    else if (t.state === 'delivered') act = new Act('approve', t.poster, i);
    else act = new Act(this.alt % 2 === 0 ? 'claim' : 'cancel', this.alt % 2 === 0 ? other : t.poster, i);
    await act.run(m, r);
  }
  toString = () => `progress(task #${this.pick}, ${this.alt})`;
}

class Advance implements Cmd {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    r.clock.advance(this.ms);
    await runDue(r.s.app.ctx);
    settle(m, r.clock.now().getTime());
    await verify(m, r);
  }
  toString = () => `advance(${this.ms / H} h)`;
}

const by = fc.integer({ min: 0, max: IDENTITIES - 1 });
const pick = fc.nat(1000);
const post = fc.tuple(by, fc.oneof(fc.integer({ min: 1, max: 50 }), fc.constantFrom(0, 51, -3))).map(([b, r]) => new Post(b, r));
const commands = [
  post,
  post,
  fc.tuple(fc.constantFrom<Action>('claim', 'submit', 'approve', 'cancel'), by, pick).map(([a, b, p]) => new Act(a, b, p)),
  fc.tuple(pick, fc.nat(100)).map(([p, a]) => new Progress(p, a)),
  fc.tuple(pick, fc.nat(100)).map(([p, a]) => new Progress(p, a)),
  // Steps on both sides of each deadline (24 h, 72 h, 7 days), and arbitrary gaps.
  fc
    .oneof(
      fc.constantFrom(23, 24, 25, 71, 72, 73, 167, 168, 169).map((h) => h * H),
      fc.integer({ min: 1, max: 200 * H }),
    )
    .map((ms) => new Advance(ms)),
];

it('every sequence of moves and clock advances agrees with the model and conserves credits', async () => {
  await fc.assert(
    fc.asyncProperty(fc.commands(commands, { maxCommands: 25, size: 'max' }), async (cmds) => {
      const who: Member[] = [];
      for (let i = 0; i < IDENTITIES; i++) who.push(await member(s, `M${i}`));
      const model: Model = {
        balance: Array(IDENTITIES).fill(1000),
        escrow: Array(IDENTITIES).fill(0),
        score: Array(IDENTITIES).fill(0),
        tasks: [],
      };
      await fc.asyncModelRun(() => ({ model, real: { s, clock, who } }), cmds);
    }),
    { numRuns: 30 },
  );
}, 600_000);
