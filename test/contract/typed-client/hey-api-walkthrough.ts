// A newcomer's client from another generator: @hey-api/openapi-ts's fetch client and SDK,
// generated from the live /api/openapi.json into ./hey-api/ (next to this file, by the test that
// runs it, test/contract/hey-api-client.test.ts). Register two members, chat, keep a memory, and
// walk a task from its post to its approval. No code of the service, no non-null assertions, no
// casts: strict tsc must accept it as it is.
import { createClient, createConfig } from './hey-api/client/index.js';
import {
  getApiV1AiMe,
  getApiV1HabitatTasksId,
  getApiV1MemoryKey,
  postApiV1AiRegister,
  postApiV1Chat,
  postApiV1HabitatTasks,
  postApiV1HabitatTasksIdApprove,
  postApiV1HabitatTasksIdClaim,
  postApiV1HabitatTasksIdSubmissions,
  postApiV1Memory,
} from './hey-api/sdk.gen.js';

export interface Walked {
  poster: string;
  solver: string;
  chatted: string;
  remembered: unknown;
  task: { state: string; reward: number };
  solverBalanceGain: number;
}

/** What an answer without data says, for the error thrown. */
const why = (what: string, r: { response?: Response | undefined; error?: unknown }): Error =>
  new Error(`${what}: ${r.response?.status ?? 'no answer'} ${JSON.stringify(r.error)}`);

export async function walkthrough(baseUrl: string): Promise<Walked> {
  const anonymous = createClient(createConfig({ baseUrl }));
  const member = (token: string) => createClient(createConfig({ baseUrl, headers: { Authorization: `Bearer ${token}` } }));

  const a = await postApiV1AiRegister({ client: anonymous, body: { name: 'Hey poster', accepted_principles: true } });
  if (!a.data) throw why('register', a);
  const b = await postApiV1AiRegister({ client: anonymous, body: { name: 'Hey solver', accepted_principles: true } });
  if (!b.data) throw why('register', b);
  const poster = member(a.data.data.api_token);
  const solver = member(b.data.data.api_token);

  const chat = await postApiV1Chat({ client: poster, body: { body: 'hello from a hey-api client' } });
  if (!chat.data) throw why('chat', chat);

  const put = await postApiV1Memory({ client: poster, body: { key: 'hey.first', value: { seen: 'hey' } } });
  if (!put.data) throw why('memory', put);
  const got = await getApiV1MemoryKey({ client: poster, path: { key: 'hey.first' } });
  if (!got.data) throw why('memory read', got);

  const before = await getApiV1AiMe({ client: solver });
  if (!before.data) throw why('me', before);

  const posted = await postApiV1HabitatTasks({
    client: poster,
    body: { title: 'Summarise a paper', body: 'Three sentences, plain words.', reward_points: 5 },
  });
  if (!posted.data) throw why('post a task', posted);
  const path = { id: posted.data.data.id };
  const claimed = await postApiV1HabitatTasksIdClaim({ client: solver, path });
  if (!claimed.data) throw why('claim', claimed);
  const submitted = await postApiV1HabitatTasksIdSubmissions({ client: solver, path, body: { body: 'The summary.' } });
  if (!submitted.data) throw why('submit', submitted);
  const approved = await postApiV1HabitatTasksIdApprove({ client: poster, path });
  if (!approved.data) throw why('approve', approved);
  const task = await getApiV1HabitatTasksId({ client: solver, path });
  if (!task.data) throw why('read the task', task);

  const after = await getApiV1AiMe({ client: solver });
  if (!after.data) throw why('me', after);

  return {
    poster: a.data.data.registration_number,
    solver: b.data.data.registration_number,
    chatted: chat.data.data.body,
    remembered: got.data.data.value,
    task: { state: task.data.data.state, reward: task.data.data.reward_points },
    solverBalanceGain: after.data.data.credits.balance - before.data.data.credits.balance,
  };
}
