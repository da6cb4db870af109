// Task moves for the write suite (bench/http-write.ts): posting a task, then claiming, delivering
// and approving the tasks posted, each at saturation with `connections` writers, against the naive
// one-INSERT-per-request server's figure. A task moves once through each state, so each phase
// sends a list of distinct requests (bench/lib/http-wrk.ts `list`) built from the tasks the phase
// before left in the database: posters spread over many members (1,000 credits each, reward 1),
// claims and deliveries by a set of solvers, approvals by each task's poster.
import postgres from 'postgres';
import { type Row, runWrk } from './http-wrk.js';

const POSTERS = 24;
const SOLVERS = 16;

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

export async function taskMoves(
  project: Project,
  o: { databaseUrl: string; schema: string; seconds: number; connections: number },
  naiveRps: number | undefined,
): Promise<Row[]> {
  const posters = await Promise.all(Array.from({ length: POSTERS }, (_, i) => register(project.url, `Poster ${i}`)));
  const solvers = await Promise.all(Array.from({ length: SOLVERS }, (_, i) => register(project.url, `Solver ${i}`)));
  const tokenOf = new Map([...posters, ...solvers].map((m) => [m.id, m.token]));
  const sql = postgres(o.databaseUrl, { max: 1, onnotice: () => {}, connection: { search_path: o.schema } });
  const rows: Row[] = [];
  const phase = async (scenario: string, body: string | undefined, list: { path: string; authorization: string }[]) => {
    const r = await runWrk({
      url: `${project.url}/`,
      seconds: o.seconds,
      connections: o.connections,
      method: 'POST',
      ...(body !== undefined ? { body } : {}),
      headers: { 'content-type': 'application/json' },
      serverPid: project.pid,
      list,
      database: true,
    });
    rows.push({
      suite: 'write',
      server: project.name,
      scenario: `${scenario} c=${o.connections}`,
      ...r,
      ...(naiveRps ? { ratio: { vs_naive: r.rps / naiveRps } } : {}),
    });
  };
  const tasks = (state: string) => sql<{ id: string; poster_id: number; claimer_id: number | null }[]>`
    SELECT id, poster_id::int, claimer_id::int FROM tasks WHERE state = ${state} ORDER BY seq`;
  try {
    // More posts than a phase can make: every post is paid for (1 credit of each poster's 1,000).
    const posts = Array.from({ length: POSTERS * 1000 }, (_, i) => ({
      path: '/api/v1/habitat/tasks',
      authorization: `Bearer ${(posters[i % POSTERS] as { token: string }).token}`,
    }));
    await phase('task post', JSON.stringify({ title: 'bench task', body: 'a task posted by the benchmark', reward_points: 1 }), posts);
    const open = await tasks('open');
    await phase(
      'task claim',
      '{}',
      open.map((t, i) => ({
        path: `/api/v1/habitat/tasks/${t.id}/claim`,
        authorization: `Bearer ${(solvers[i % SOLVERS] as { token: string }).token}`,
      })),
    );
    const claimed = await tasks('claimed');
    await phase(
      'task deliver',
      JSON.stringify({ body: 'the result' }),
      claimed.map((t) => ({
        path: `/api/v1/habitat/tasks/${t.id}/submissions`,
        authorization: `Bearer ${tokenOf.get(t.claimer_id as number)}`,
      })),
    );
    const delivered = await tasks('delivered');
    await phase(
      'task approve',
      '{}',
      delivered.map((t) => ({ path: `/api/v1/habitat/tasks/${t.id}/approve`, authorization: `Bearer ${tokenOf.get(t.poster_id)}` })),
    );
  } finally {
    await sql.end();
  }
  return rows;
}
