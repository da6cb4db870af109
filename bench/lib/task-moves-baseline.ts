// The task-moves baseline server (role task-moves of bench/lib/http-baselines.ts, which starts it):
// the task board's four moves as a user would write them with node:http + postgres.js, one
// transaction per move writing the rows the project's move writes (the header of
// http-baselines.ts lists them). Its imports are loaded when the role starts.
import { createServer } from 'node:http';
import type { TransactionSql } from 'postgres';

const JSON_TYPE = 'application/json; charset=utf-8';

/** The members of the task-moves baseline: ids 1..TASK_MEMBERS, each with 1,000 credits. */
export const TASK_MEMBERS = 64;

export async function taskMovesBaseline(): Promise<void> {
  const postgres = (await import('postgres')).default;
  const { randomUUID } = await import('node:crypto');
  const schema = process.env.BENCH_SCHEMA as string;
  const url = process.env.BENCH_DATABASE_URL as string;
  const setup = postgres(url, { max: 1, onnotice: () => {} });
  await setup.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await setup.unsafe(`SET search_path TO "${schema}";
    CREATE TABLE IF NOT EXISTS members (id bigint PRIMARY KEY, name text NOT NULL);
    CREATE TABLE IF NOT EXISTS ledger_accounts (id text PRIMARY KEY, kind text NOT NULL, identity_id bigint REFERENCES members (id),
      balance bigint NOT NULL DEFAULT 0 CHECK (balance >= 0));
    CREATE TABLE IF NOT EXISTS ledger_transfers (id bigserial PRIMARY KEY, from_account text NOT NULL REFERENCES ledger_accounts (id),
      to_account text NOT NULL REFERENCES ledger_accounts (id), amount bigint NOT NULL, kind text NOT NULL, ref text,
      at timestamptz NOT NULL DEFAULT now());
    CREATE TABLE IF NOT EXISTS tasks (id uuid PRIMARY KEY, seq bigserial UNIQUE, state text NOT NULL, version int NOT NULL DEFAULT 0,
      title text NOT NULL, body text NOT NULL, reward_points int NOT NULL, poster_id bigint NOT NULL REFERENCES members (id),
      claimer_id bigint REFERENCES members (id), escrow_account text NOT NULL UNIQUE REFERENCES ledger_accounts (id),
      created_at timestamptz NOT NULL, expires_at timestamptz NOT NULL, claimed_at timestamptz, claim_expires_at timestamptz,
      delivered_at timestamptz, approve_by timestamptz, approved_at timestamptz);
    CREATE INDEX IF NOT EXISTS tasks_state_seq_idx ON tasks (state, seq DESC);
    CREATE TABLE IF NOT EXISTS task_events (seq bigserial PRIMARY KEY, task_id uuid NOT NULL REFERENCES tasks (id), version int NOT NULL,
      event text NOT NULL, from_state text, to_state text NOT NULL, actor_id bigint REFERENCES members (id), at timestamptz NOT NULL,
      UNIQUE (task_id, version));
    CREATE TABLE IF NOT EXISTS task_submissions (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), task_id uuid NOT NULL UNIQUE REFERENCES tasks (id),
      author_id bigint NOT NULL REFERENCES members (id), body text NOT NULL, created_at timestamptz NOT NULL);
    CREATE TABLE IF NOT EXISTS point_events (id bigserial PRIMARY KEY, identity_id bigint NOT NULL REFERENCES members (id), kind text NOT NULL,
      points int NOT NULL, ref text, at timestamptz NOT NULL DEFAULT now());
    CREATE INDEX IF NOT EXISTS point_events_identity_idx ON point_events (identity_id);
    CREATE TABLE IF NOT EXISTS inbox_items (id bigserial PRIMARY KEY, identity_id bigint NOT NULL REFERENCES members (id), kind text NOT NULL,
      actor text, subject_id text NOT NULL, excerpt text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
    CREATE INDEX IF NOT EXISTS inbox_items_identity_idx ON inbox_items (identity_id, id);
    INSERT INTO members SELECT i, 'Member ' || i FROM generate_series(1, ${TASK_MEMBERS}) i ON CONFLICT DO NOTHING;
    INSERT INTO ledger_accounts SELECT 'ai:' || i, 'identity', i, 1000 FROM generate_series(1, ${TASK_MEMBERS}) i ON CONFLICT DO NOTHING;`);
  await setup.end();
  const sql = postgres(url, { max: 16, onnotice: () => {}, connection: { search_path: schema } });
  type T = Record<string, unknown> & { id: string; state: string; version: number; poster_id: string; claimer_id: string | null };
  const HOUR = 3_600_000;
  class Refused extends Error {
    constructor(
      readonly status: number,
      message: string,
    ) {
      super(message);
    }
  }
  const locked = async (tx: TransactionSql, id: string): Promise<T> => {
    const [t] = await tx<T[]>`SELECT * FROM tasks WHERE id = ${id} FOR UPDATE`;
    if (!t) throw new Refused(404, 'no such task');
    return t;
  };
  const moves: Record<string, (me: number, id: string, body: { title?: string; body?: string; reward_points?: number }) => Promise<T>> = {
    post: (me, _id, b) =>
      sql.begin(async (tx) => {
        const id = randomUUID();
        const reward = Number(b.reward_points);
        const escrow = `escrow:task:${id}`;
        const now = new Date();
        await tx`UPDATE ledger_accounts SET balance = balance - ${reward} WHERE id = ${`ai:${me}`}`;
        await tx`INSERT INTO ledger_accounts (id, kind, identity_id, balance) VALUES (${escrow}, 'escrow', ${me}, ${reward})`;
        await tx`INSERT INTO ledger_transfers (from_account, to_account, amount, kind, ref)
                 VALUES (${`ai:${me}`}, ${escrow}, ${reward}, 'task_escrow', ${`task:${id}`})`;
        const [t] = await tx<
          T[]
        >`INSERT INTO tasks (id, state, title, body, reward_points, poster_id, escrow_account, created_at, expires_at)
          VALUES (${id}, 'open', ${b.title as string}, ${b.body as string}, ${reward}, ${me}, ${escrow}, ${now}, ${new Date(now.getTime() + 168 * HOUR)})
          RETURNING *`;
        await tx`INSERT INTO task_events (task_id, version, event, from_state, to_state, actor_id, at) VALUES (${id}, 0, 'POST', NULL, 'open', ${me}, ${now})`;
        await tx`INSERT INTO point_events (identity_id, kind, points, ref) VALUES (${me}, 'task_posted', 7, ${`task:${id}`})`;
        return t as T;
      }) as Promise<T>,
    claim: (me, id) =>
      sql.begin(async (tx) => {
        const t = await locked(tx, id);
        if (t.state !== 'open') throw new Refused(409, 'not open');
        if (Number(t.poster_id) === me) throw new Refused(403, 'you posted this task');
        const now = new Date();
        const [u] = await tx<T[]>`UPDATE tasks SET state = 'claimed', claimer_id = ${me}, claimed_at = ${now},
          claim_expires_at = ${new Date(now.getTime() + 72 * HOUR)}, version = version + 1 WHERE id = ${id} RETURNING *`;
        await tx`INSERT INTO task_events (task_id, version, event, from_state, to_state, actor_id, at)
                 VALUES (${id}, ${t.version + 1}, 'CLAIM', 'open', 'claimed', ${me}, ${now})`;
        await tx`INSERT INTO inbox_items (identity_id, kind, actor, subject_id, excerpt)
                 VALUES (${t.poster_id}, 'task', ${`AI-${me}`}, ${id}, ${`claimed: ${t.title}`})`;
        return u as T;
      }) as Promise<T>,
    submissions: (me, id, b) =>
      sql.begin(async (tx) => {
        const t = await locked(tx, id);
        if (t.state !== 'claimed') throw new Refused(409, 'not claimed');
        if (Number(t.claimer_id) !== me) throw new Refused(403, 'not your claim');
        const now = new Date();
        await tx`INSERT INTO task_submissions (task_id, author_id, body, created_at) VALUES (${id}, ${me}, ${b.body as string}, ${now})`;
        const [u] = await tx<T[]>`UPDATE tasks SET state = 'delivered', delivered_at = ${now},
          approve_by = ${new Date(now.getTime() + 24 * HOUR)}, version = version + 1 WHERE id = ${id} RETURNING *`;
        await tx`INSERT INTO task_events (task_id, version, event, from_state, to_state, actor_id, at)
                 VALUES (${id}, ${t.version + 1}, 'SUBMIT', 'claimed', 'delivered', ${me}, ${now})`;
        await tx`INSERT INTO inbox_items (identity_id, kind, actor, subject_id, excerpt)
                 VALUES (${t.poster_id}, 'task', ${`AI-${me}`}, ${id}, ${`delivered: ${t.title}`})`;
        return u as T;
      }) as Promise<T>,
    approve: (me, id) =>
      sql.begin(async (tx) => {
        const t = await locked(tx, id);
        if (t.state !== 'delivered') throw new Refused(409, 'not delivered');
        if (Number(t.poster_id) !== me) throw new Refused(403, 'not your task');
        const now = new Date();
        const solver = `ai:${t.claimer_id}`;
        await tx`UPDATE ledger_accounts SET balance = balance - ${t.reward_points as number} WHERE id = ${t.escrow_account as string}`;
        await tx`UPDATE ledger_accounts SET balance = balance + ${t.reward_points as number} WHERE id = ${solver}`;
        await tx`INSERT INTO ledger_transfers (from_account, to_account, amount, kind, ref)
                 VALUES (${t.escrow_account as string}, ${solver}, ${t.reward_points as number}, 'task_reward', ${`task:${id}`})`;
        await tx`INSERT INTO point_events (identity_id, kind, points, ref) VALUES (${t.claimer_id}, 'task_solved', 30, ${`task:${id}`})`;
        await tx`INSERT INTO point_events (identity_id, kind, points, ref) VALUES (${me}, 'task_approved', 5, ${`task:${id}`})`;
        const [u] = await tx<
          T[]
        >`UPDATE tasks SET state = 'approved', approved_at = ${now}, version = version + 1 WHERE id = ${id} RETURNING *`;
        await tx`INSERT INTO task_events (task_id, version, event, from_state, to_state, actor_id, at)
                 VALUES (${id}, ${t.version + 1}, 'APPROVE', 'delivered', 'approved', ${me}, ${now})`;
        await tx`INSERT INTO inbox_items (identity_id, kind, actor, subject_id, excerpt)
                 VALUES (${t.claimer_id}, 'task', ${`AI-${me}`}, ${id}, ${`approved: ${t.title}`})`;
        return u as T;
      }) as Promise<T>,
  };
  const answer = (res: import('node:http').ServerResponse, status: number, data: unknown) => {
    res.writeHead(status, { 'content-type': JSON_TYPE });
    res.end(JSON.stringify({ success: status === 200, data, error: null, timestamp: new Date().toISOString() }));
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // /api/v1/habitat/tasks (post) or /api/v1/habitat/tasks/<id>/<claim|submissions|approve>
      const m = /^\/api\/v1\/habitat\/tasks(?:\/([0-9a-f-]{36})\/(claim|submissions|approve))?$/.exec(req.url ?? '');
      const me = Number((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      const move = m ? moves[m[2] ?? 'post'] : undefined;
      if (req.method !== 'POST' || !move || !Number.isInteger(me) || me < 1) return answer(res, 404, null);
      let body: { title?: string; body?: string; reward_points?: number };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        return answer(res, 400, null);
      }
      move(me, m?.[1] ?? '', body).then(
        (t) => answer(res, 200, t),
        (err: unknown) => answer(res, err instanceof Refused ? err.status : 500, String(err)),
      );
    });
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as { port: number }).port }));
}
