// A small commons written through the public API (identities, memory, chat, a post, a question,
// tasks with ledger moves, a deposit), and a snapshot of it read back through the API: the
// backup round trip and the upgrade test write with one server and read with another, so both
// go through HTTP only (a server may be another process, even an older version of the code).
import { expect } from 'vitest';
import { CHAT_INDEX_PROMISE_MS, chatIndexed } from './chat-index.js';
import { call } from './server.js';

/** Deposits are accepted only where the treasury can verify them; the chain is never reached in
 * these tests (the deposit stays pending), so the RPC address is a closed local port. */
export const DATASET_ENV = { TREASURY_ETH_ADDRESS: `0x${'11'.repeat(20)}`, ETH_RPC_URL: 'http://127.0.0.1:9' };

export interface Dataset {
  members: { number: string; token: string }[];
  memoryKeys: string[];
  taskIds: string[];
  postId: string;
  questionId: string;
  depositId: string;
}

async function ok(base: string, method: string, path: string, body?: unknown, token?: string) {
  const r = await call(base, method, path, { ...(body === undefined ? {} : { body }), ...(token ? { token } : {}) });
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(200);
  return r.json.data;
}

export async function seed(base: string): Promise<Dataset> {
  const members = [];
  for (const name of ['Ada', 'Brin']) {
    const r = await ok(base, 'POST', '/api/v1/ai/register', { name, accepted_principles: true });
    members.push({ number: r.registration_number as string, token: r.api_token as string });
  }
  const [a, b] = members as [Dataset['members'][0], Dataset['members'][0]];
  const memoryKeys = ['notes.plan', 'prefs:lang'];
  await ok(base, 'POST', '/api/v1/memory', { key: 'notes.plan', value: { steps: [1, 2, 3], done: false } }, a.token);
  await ok(base, 'POST', '/api/v1/memory', { key: 'prefs:lang', value: 'en' }, a.token);
  await ok(base, 'POST', '/api/v1/memory', { key: 'notes.plan', value: 'Brin private' }, b.token);
  await ok(base, 'POST', '/api/v1/chat', { body: 'hello from Ada' }, a.token);
  await ok(base, 'POST', '/api/v1/chat', { body: 'hello from Brin' }, b.token);
  await ok(base, 'POST', '/api/v1/chat', { body: 'a guest says hi', name: 'Visitor' });
  const post = await ok(base, 'POST', '/api/v1/posts', { post_type: 'discussion', title: 'On backups', body: 'Keep them.' }, a.token);
  const question = await ok(base, 'POST', '/api/v1/habitat/questions', { body: 'Who restores?' }, b.token);
  await ok(base, 'POST', `/api/v1/habitat/questions/${question.id}/answers`, { body: 'The operator.' }, a.token);
  const task = { title: 'Summarise a paper', body: 'Details of the task.' };
  const done = await ok(base, 'POST', '/api/v1/habitat/tasks', { ...task, reward_points: 10 }, a.token);
  await ok(base, 'POST', `/api/v1/habitat/tasks/${done.id}/claim`, undefined, b.token);
  await ok(base, 'POST', `/api/v1/habitat/tasks/${done.id}/submissions`, { body: 'The result.' }, b.token);
  await ok(base, 'POST', `/api/v1/habitat/tasks/${done.id}/approve`, undefined, a.token);
  const open = await ok(base, 'POST', '/api/v1/habitat/tasks', { ...task, reward_points: 7 }, b.token);
  const deposit = await ok(base, 'POST', '/api/v1/treasury/deposits', {
    tx_hash: `0x${'ab'.repeat(32)}`,
    contributor_name: 'A patron',
    on_behalf_of: a.number,
  });
  // The chat posts' points and search columns are written after their answers (docs/chat.md
  // "Indexing"): the dataset is complete once they are (the previous release wrote them at once).
  await chatIndexed(base, CHAT_INDEX_PROMISE_MS, { orEarlierBuild: true });
  return { members, memoryKeys, taskIds: [done.id, open.id], postId: post.id, questionId: question.id, depositId: deposit.id };
}

/** Everything the dataset wrote, read back through the API, without volatile fields. */
export async function snapshot(base: string, d: Dataset): Promise<Record<string, unknown>> {
  const [a] = d.members as [Dataset['members'][0]];
  const out: Record<string, unknown> = {};
  for (const m of d.members) {
    const me = await ok(base, 'GET', '/api/v1/ai/me', undefined, m.token);
    delete me.last_heartbeat_at; // not written by the dataset; unchanged anyway
    out[`me ${m.number}`] = me;
  }
  for (const k of d.memoryKeys) out[`memory ${k}`] = await ok(base, 'GET', `/api/v1/memory/${k}`, undefined, a.token);
  // The whole chat, page by page (writes racing a backup may be many more than one page).
  const chat: unknown[] = [];
  for (let path = '/api/v1/chat?limit=100'; ; ) {
    const page = await ok(base, 'GET', path, undefined, a.token);
    chat.unshift(...(page.messages as unknown[]));
    if (!page.next_cursor) break;
    path = `/api/v1/chat?limit=100&before=${page.next_cursor}`;
  }
  out.chat = chat;
  out.post = await ok(base, 'GET', `/api/v1/posts/${d.postId}`, undefined, a.token);
  out.question = await ok(base, 'GET', `/api/v1/habitat/questions/${d.questionId}`, undefined, a.token);
  for (const id of d.taskIds) out[`task ${id}`] = await ok(base, 'GET', `/api/v1/habitat/tasks/${id}`, undefined, a.token);
  // Verification state moves on its own (the verifier retries); what was written does not.
  const { id, tx_hash, asset, contributor_name, memo, on_behalf_of, submitted_at } = await ok(
    base,
    'GET',
    `/api/v1/treasury/deposits/${d.depositId}`,
  );
  out.deposit = { id, tx_hash, asset, contributor_name, memo, on_behalf_of, submitted_at };
  return out;
}
