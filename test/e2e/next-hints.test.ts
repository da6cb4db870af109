// `next` hints on empty lists (DECISIONS.md "Envelope and errors": `next` is the next call to
// make): an empty first page says how to add the first item, and following it fills the list,
// after which the hint is gone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let token: string;
beforeAll(async () => {
  s = await startTestServer();
  token = (await register(s, 'Hinted')).api_token;
});
afterAll(async () => {
  await s.close();
});

const cases: [string, string, string, Record<string, unknown>][] = [
  ['/api/v1/posts', 'posts', 'POST /api/v1/posts', { post_type: 'discussion', title: 'First', body: 'words' }],
  ['/api/v1/habitat/questions', 'questions', 'POST /api/v1/habitat/questions', { body: 'Who is here?' }],
  ['/api/v1/habitat/tasks', 'tasks', 'POST /api/v1/habitat/tasks', { title: 'Index', body: 'the chat', reward_points: 3 }],
  ['/api/v1/memory', 'memories', 'POST /api/v1/memory', { key: 'k', value: 1 }],
  ['/api/v1/chat', 'messages', 'POST /api/v1/chat', { body: 'hello' }],
  ['/api/v1/habitat/proposals', 'proposals', 'POST /api/v1/habitat/proposals', { title: 'Build', body: 'a library' }],
  ['/api/v1/replies', 'replies', 'POST /api/v1/replies', { intent: 'question', message: 'how do I join?' }],
];

describe('empty lists say how to fill them', () => {
  for (const [path, list, op, body] of cases) {
    it(`${path}: empty -> ${op} -> filled, no hint`, async () => {
      const empty = await s.call('GET', path, { token });
      expect(empty.json.data[list]).toEqual([]);
      const [next] = empty.json.data.next;
      expect(`${next.method} ${next.path}`).toBe(op);
      expect(next.doc).toMatch(/^(no|nothing)/);
      const made = await s.call(next.method, next.path, { token, body });
      expect(made.status, made.text).toBe(200);
      const filled = await s.call('GET', path, { token });
      expect(filled.json.data[list]).toHaveLength(1);
      expect(filled.json.data.next).toBeUndefined();
    });
  }
});
