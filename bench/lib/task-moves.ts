// Task moves for the write suite (bench/http-write.ts): posting a task, then claiming, delivering
// and approving the tasks posted, each at saturation with `connections` writers, against the naive
// one-INSERT-per-request server's figure. A task moves once through each state, so each phase
// sends a list of distinct requests (bench/lib/http-wrk.ts `list`) built from the tasks the phase
// before left in the database: posters spread over many members (1,000 credits each, reward 1),
// claims and deliveries by a set of solvers, approvals by each task's poster. Each phase runs in
// SLICES turns per side, alternating which goes first (a phase's list split in parts; the posts'
// seconds split), and its rate is all its requests over all their time: on a machine others load,
// a burst of their work falls on both sides instead of on one side's whole phase (one turn per
// side moved the ratios by up to 3x between identical runs).
import postgres from 'postgres';
import { type Row, runWrk } from './http-wrk.js';

const POSTERS = 24;
const SOLVERS = 16;
/** Each phase runs in this many turns per side, alternating (see `phase`). */
const SLICES = 4;

/** One row for a phase's slices: requests over the time they took, CPU weighted by time, the
 * median slice's p50 and the worst p99. */
function combined(rows: Row[]): Row {
  const first = rows[0] as Row;
  const time = rows.reduce((t, r) => t + (r.seconds ?? 0), 0);
  const requests = rows.reduce((t, r) => t + (r.requests ?? 0), 0);
  const by = (f: (r: Row) => number) => (time > 0 ? rows.reduce((t, r) => t + f(r) * (r.seconds ?? 0), 0) / time : 0);
  const serverCpuS = rows.reduce((t, r) => t + r.server_cpu * (r.seconds ?? 0), 0);
  const p50s = rows.map((r) => r.p50_ms).sort((a, b) => a - b);
  return {
    ...first,
    rps: time > 0 ? Math.round(requests / time) : 0,
    requests,
    seconds: time,
    p50_ms: p50s[Math.floor(p50s.length / 2)] as number,
    p99_ms: Math.max(...rows.map((r) => r.p99_ms)),
    errors: rows.reduce((t, r) => t + r.errors, 0),
    server_cpu: by((r) => r.server_cpu),
    client_cpu: by((r) => r.client_cpu),
    client_bound: rows.some((r) => r.client_bound),
    per_cpu_s: serverCpuS > 0 ? Math.round(requests / serverCpuS) : 0,
    ...(first.db_cpu !== undefined ? { db_cpu: by((r) => r.db_cpu ?? 0), db_busiest: by((r) => r.db_busiest ?? 0) } : {}),
  };
}

interface Project {
  name: string;
  pid: number;
  url: string;
}

/** A new member of the project: its token and its number. */
export async function register(url: string, name: string): Promise<{ token: string; id: number }> {
  const r = await fetch(`${url}/api/v1/ai/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, accepted_principles: true }),
  });
  const j = (await r.json()) as { data: { api_token: string; registration_number: string } };
  return { token: j.data.api_token, id: Number(j.data.registration_number.replace(/\D/g, '')) };
}

/** One server of the comparison: how a member is named in Authorization, and its tasks in a state. */
interface Side {
  server: Project;
  /** The Authorization header of poster i and of solver i. */
  poster: (i: number) => string;
  solver: (i: number) => string;
  /** The header of the member with this id (the claimer delivering, the poster approving). */
  member: (id: number) => string;
  tasks: (state: string) => Promise<{ id: string; poster_id: number; claimer_id: number | null }[]>;
}

/**
 * The four moves on the project and, when given, on the same-work baseline (bench/lib/http-baselines.ts
 * `task-moves`, in the schema `baseline.schema`), each phase run on both one after the other (the
 * order alternating phase by phase), each over its own distinct tasks. The baseline's rows carry
 * the project's ratio to it as `vs_same_work` (on the project's row).
 */
export async function taskMoves(
  project: Project,
  o: { databaseUrl: string; schema: string; seconds: number; connections: number },
  naiveRps: number | undefined,
  baseline?: Project & { schema: string },
): Promise<Row[]> {
  const posters = await Promise.all(Array.from({ length: POSTERS }, (_, i) => register(project.url, `Poster ${i}`)));
  const solvers = await Promise.all(Array.from({ length: SOLVERS }, (_, i) => register(project.url, `Solver ${i}`)));
  const tokenOf = new Map([...posters, ...solvers].map((m) => [m.id, m.token]));
  const sql = postgres(o.databaseUrl, { max: 1, onnotice: () => {} });
  const tasksIn = (schema: string) => (state: string) =>
    sql.unsafe<{ id: string; poster_id: number; claimer_id: number | null }[]>(
      `SELECT id, poster_id::int, claimer_id::int FROM "${schema}".tasks WHERE state = $1 ORDER BY seq`,
      [state],
    );
  const sides: Side[] = [
    {
      server: project,
      poster: (i) => `Bearer ${(posters[i % POSTERS] as { token: string }).token}`,
      solver: (i) => `Bearer ${(solvers[i % SOLVERS] as { token: string }).token}`,
      member: (id) => `Bearer ${tokenOf.get(id)}`,
      tasks: tasksIn(o.schema),
    },
  ];
  if (baseline)
    sides.push({
      server: baseline,
      poster: (i) => `Bearer ${1 + (i % POSTERS)}`,
      solver: (i) => `Bearer ${1 + POSTERS + (i % SOLVERS)}`,
      member: (id) => `Bearer ${id}`,
      tasks: tasksIn(baseline.schema),
    });
  const rows: Row[] = [];
  let turn = 0;
  const phase = async (
    scenario: string,
    body: string | undefined,
    list: (side: Side) => Promise<{ path: string; authorization: string }[]>,
    /** Each slice sends the whole list again (posts), instead of its own part of it. */
    repeat = false,
  ) => {
    const lists = new Map<Side, { path: string; authorization: string }[]>();
    for (const side of sides) lists.set(side, await list(side));
    const slices = new Map<Side, Row[]>();
    // In SLICES turns, alternating which side goes first, so a burst of other load on this machine
    // falls on both sides rather than on one side's whole phase.
    for (let k = 0; k < SLICES; k++) {
      const order = turn++ % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const all = lists.get(side) as { path: string; authorization: string }[];
        const part = repeat ? all : all.slice(Math.floor((k * all.length) / SLICES), Math.floor(((k + 1) * all.length) / SLICES));
        if (part.length === 0) continue;
        const r = await runWrk({
          url: `${side.server.url}/`,
          seconds: repeat ? Math.max(1, Math.round(o.seconds / SLICES)) : o.seconds,
          connections: o.connections,
          method: 'POST',
          ...(body !== undefined ? { body } : {}),
          headers: { 'content-type': 'application/json' },
          serverPid: side.server.pid,
          list: part,
          database: true,
        });
        slices.set(side, [
          ...(slices.get(side) ?? []),
          { suite: 'write', server: side.server.name, scenario: `${scenario} c=${o.connections}`, ...r },
        ]);
      }
    }
    const got = new Map<Side, Row>();
    for (const side of sides) got.set(side, combined(slices.get(side) ?? []));
    if (process.env.BENCH_FUNCTION_STATS) {
      // Where the project's PostgreSQL time went, by SQL function (needs track_functions = 'all'
      // on the bench database): cumulative since the server started.
      const fns = await sql<{ funcname: string; calls: number; total_ms: number; self_ms: number }[]>`
        SELECT funcname, calls::int, round(total_time)::int AS total_ms, round(self_time)::int AS self_ms
        FROM pg_stat_user_functions WHERE schemaname = ${o.schema} ORDER BY total_time DESC`;
      console.error(`after ${scenario}: ${fns.map((f) => `${f.funcname} ${f.calls} calls ${f.total_ms}/${f.self_ms} ms`).join('; ')}`);
    }
    const mine = got.get(sides[0] as Side) as Row;
    const same = baseline ? got.get(sides[1] as Side) : undefined;
    mine.ratio = { ...(naiveRps ? { vs_naive: mine.rps / naiveRps } : {}), ...(same ? { vs_same_work: mine.rps / same.rps } : {}) };
    rows.push(...sides.map((s) => got.get(s) as Row));
  };
  try {
    // More posts than a phase can make: every post is paid for (1 credit of each poster's 1,000).
    await phase(
      'task post',
      JSON.stringify({ title: 'bench task', body: 'a task posted by the benchmark', reward_points: 1 }),
      async (side) =>
        Array.from({ length: (POSTERS * 1000) / SLICES }, (_, i) => ({ path: '/api/v1/habitat/tasks', authorization: side.poster(i) })),
      true,
    );
    await phase('task claim', '{}', async (side) =>
      (await side.tasks('open')).map((t, i) => ({ path: `/api/v1/habitat/tasks/${t.id}/claim`, authorization: side.solver(i) })),
    );
    await phase('task deliver', JSON.stringify({ body: 'the result' }), async (side) =>
      (await side.tasks('claimed')).map((t) => ({
        path: `/api/v1/habitat/tasks/${t.id}/submissions`,
        authorization: side.member(t.claimer_id as number),
      })),
    );
    await phase('task approve', '{}', async (side) =>
      (await side.tasks('delivered')).map((t) => ({
        path: `/api/v1/habitat/tasks/${t.id}/approve`,
        authorization: side.member(t.poster_id),
      })),
    );
  } finally {
    await sql.end();
  }
  return rows;
}
