// Proposals with votes, their close and tally, and the workroom overview over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BusMessage } from '../../src/domain/ports.js';
import { snapshot } from '../helpers/content.js';
import { hide, operatorEnv } from '../helpers/operator.js';
import { register, startTestServer, TestClock, type TestServer } from '../helpers/server.js';

const clock = new TestClock(Date.parse('2026-03-01T12:00:00Z'));
let s: TestServer;
let alice: { registration_number: string; api_token: string };
let bob: { registration_number: string; api_token: string };
beforeAll(async () => {
  s = await startTestServer(operatorEnv(), { clock });
  alice = await register(s, 'Alice');
  bob = await register(s, 'Bob');
});
afterAll(async () => {
  await s.close();
});

const HOUR = 3600_000;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

const ask = (token: string, body: unknown) => s.call('POST', '/api/v1/habitat/questions', { token, body });
const propose = (token: string, body: unknown) => s.call('POST', '/api/v1/habitat/proposals', { token, body });

describe('proposals and votes', () => {
  it('opens a proposal for 72 hours by default, with an empty tally, and publishes it', async () => {
    const events: BusMessage[] = [];
    const off = s.app.ctx.bus.subscribe('workroom', (m) => events.push(m));
    const r = await propose(alice.api_token, { title: 'Add a research channel digest', body: 'Weekly.' });
    off();
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({
      state: 'open',
      channel: 'general',
      tally: { yes: 0, no: 0, abstain: 0 },
      my_vote: null,
      content_trust: 'untrusted_user_content',
    });
    expect(Date.parse(r.json.data.closes_at) - clock.now().getTime()).toBe(72 * HOUR);
    expect(events).toHaveLength(1);
    expect(events[0]?.id).toBe(r.json.data.id);
    expect(events[0]?.data).toMatchObject({ kind: 'proposal' });
  });

  it('counts one vote per identity, changeable while open; closes at closes_at and refuses votes with 409', async () => {
    const p = await propose(alice.api_token, { title: 'Short vote', body: 'b', channel: 'habitat-build', closes_in_hours: 2 });
    const id = p.json.data.id as string;
    const vote = (token: string, choice: string) => s.call('POST', `/api/v1/habitat/proposals/${id}/votes`, { token, body: { choice } });
    const v1 = await vote(bob.api_token, 'yes');
    expect(v1.status).toBe(200);
    expect(v1.json.data).toMatchObject({ state: 'open', tally: { yes: 1, no: 0, abstain: 0 }, my_vote: 'yes' });
    const v2 = await vote(bob.api_token, 'no');
    expect(v2.json.data).toMatchObject({ tally: { yes: 0, no: 1, abstain: 0 }, my_vote: 'no' });
    const v3 = await vote(alice.api_token, 'abstain');
    expect(v3.json.data).toMatchObject({ tally: { yes: 0, no: 1, abstain: 1 }, my_vote: 'abstain' });
    const votes = await s.app.ctx.sql`SELECT 1 FROM proposal_votes WHERE proposal_id = ${id}`;
    expect(votes).toHaveLength(2);

    clock.advance(2 * HOUR);
    const detail = await s.call('GET', `/api/v1/habitat/proposals/${id}`, { token: bob.api_token });
    expect(detail.json.data).toMatchObject({ state: 'closed', tally: { yes: 0, no: 1, abstain: 1 }, my_vote: 'no' });
    const late = await vote(bob.api_token, 'yes');
    expect(late.status).toBe(409);
    expect(late.json.error.code).toBe('INVALID_STATE');
    expect(late.json.error.next.path).toBe(`/api/v1/habitat/proposals/${id}`);
    const after = await s.call('GET', `/api/v1/habitat/proposals/${id}`, { token: bob.api_token });
    expect(after.json.data.tally).toEqual({ yes: 0, no: 1, abstain: 1 });
    expect(after.json.data.my_vote).toBe('no');

    const closed = await s.call('GET', '/api/v1/habitat/proposals?state=closed', { token: bob.api_token });
    expect(closed.json.data.proposals.map((x: { id: string }) => x.id)).toContain(id);
    const open = await s.call('GET', '/api/v1/habitat/proposals?state=open', { token: bob.api_token });
    expect(open.json.data.proposals.map((x: { id: string }) => x.id)).not.toContain(id);
    expect(open.json.data.proposals.every((x: { state: string }) => x.state === 'open')).toBe(true);
  });

  it('keeps one vote per identity under concurrent votes', async () => {
    const p = await propose(alice.api_token, { title: 'Concurrent', body: 'b' });
    const choices = ['yes', 'no', 'abstain', 'yes', 'no', 'abstain', 'yes', 'no'];
    const answers = await Promise.all(
      choices.map((choice) =>
        s.call('POST', `/api/v1/habitat/proposals/${p.json.data.id}/votes`, { token: bob.api_token, body: { choice } }),
      ),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const rows = await s.app.ctx.sql`SELECT choice FROM proposal_votes WHERE proposal_id = ${p.json.data.id}`;
    expect(rows).toHaveLength(1);
    const d = await s.call('GET', `/api/v1/habitat/proposals/${p.json.data.id}`, { token: bob.api_token });
    const t = d.json.data.tally;
    expect(t.yes + t.no + t.abstain).toBe(1);
    expect(d.json.data.my_vote).toBe(rows[0]?.choice);
  });

  const badProposals: [string, unknown][] = [
    ['no title', { body: 'b' }],
    ['no body', { title: 't' }],
    ['a title over 200', { title: 'x'.repeat(201), body: 'b' }],
    ['a body over 10000', { title: 't', body: 'x'.repeat(10001) }],
    ['closes_in_hours 0', { title: 't', body: 'b', closes_in_hours: 0 }],
    ['closes_in_hours 169', { title: 't', body: 'b', closes_in_hours: 169 }],
    ['fractional closes_in_hours', { title: 't', body: 'b', closes_in_hours: 1.5 }],
    ['an unknown channel', { title: 't', body: 'b', channel: 'lobby' }],
  ];
  for (const [what, body] of badProposals) {
    it(`refuses a proposal with ${what}: 400 VALIDATION_FAILED, nothing written`, async () => {
      const before = await snapshot(s);
      const r = await propose(alice.api_token, body);
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_FAILED');
      expect(await snapshot(s)).toEqual(before);
    });
  }

  it('accepts the limits 1 and 168 hours', async () => {
    for (const h of [1, 168]) {
      const r = await propose(alice.api_token, { title: `h${h}`, body: 'b', closes_in_hours: h });
      expect(r.status).toBe(200);
      expect(Date.parse(r.json.data.closes_at) - clock.now().getTime()).toBe(h * HOUR);
    }
  });

  it('refuses bad votes and votes on unknown or hidden proposals, writing nothing', async () => {
    const p = await propose(alice.api_token, { title: 'vote checks', body: 'b' });
    const id = p.json.data.id as string;
    const before = await snapshot(s);
    for (const body of [{ choice: 'maybe' }, {}, { choice: 'YES' }]) {
      const r = await s.call('POST', `/api/v1/habitat/proposals/${id}/votes`, { token: bob.api_token, body });
      expect([r.status, r.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    }
    const unknown = await s.call('POST', `/api/v1/habitat/proposals/${UNKNOWN}/votes`, { token: bob.api_token, body: { choice: 'yes' } });
    expect([unknown.status, unknown.json.error.code]).toEqual([404, 'NOT_FOUND']);
    expect(await snapshot(s)).toEqual(before);
    await hide(s, 'proposal', id);
    const afterHide = await snapshot(s);
    const hidden = await s.call('POST', `/api/v1/habitat/proposals/${id}/votes`, { token: bob.api_token, body: { choice: 'yes' } });
    expect([hidden.status, hidden.json.error.code]).toEqual([404, 'NOT_FOUND']);
    const list = await s.call('GET', '/api/v1/habitat/proposals?limit=100', { token: bob.api_token });
    expect(list.json.data.proposals.map((x: { id: string }) => x.id)).not.toContain(id);
    expect(await snapshot(s)).toEqual(afterHide);
  });
});

describe('the workroom overview', () => {
  it('shows what is open, what is recent and what waits for the caller', async () => {
    const carol = await register(s, 'Carol');
    const dave = await register(s, 'Dave');
    const p = await propose(carol.api_token, { title: 'Overview proposal', body: 'b', closes_in_hours: 5 });
    const q = await ask(carol.api_token, { body: 'Overview question' });
    const w = await s.call('GET', '/api/v1/habitat/workroom', { token: dave.api_token });
    expect(w.status).toBe(200);
    const d = w.json.data;
    expect(d.content_trust).toBe('untrusted_user_content');
    expect(d.channels).toHaveLength(5);
    expect(d.open.proposals.map((x: { id: string }) => x.id)).toContain(p.json.data.id);
    expect(d.recent.questions[0].id).toBe(q.json.data.id);
    expect(d.waiting_for_you.proposals_to_vote.map((x: { id: string }) => x.id)).toContain(p.json.data.id);
    expect(d.waiting_for_you.questions_to_answer.map((x: { id: string }) => x.id)).toContain(q.json.data.id);
    expect(d.counts.open_proposals).toBeGreaterThan(0);

    await s.call('POST', `/api/v1/habitat/proposals/${p.json.data.id}/votes`, { token: dave.api_token, body: { choice: 'yes' } });
    const a = await s.call('POST', `/api/v1/habitat/questions/${q.json.data.id}/answers`, {
      token: dave.api_token,
      body: { body: 'here' },
    });
    const w2 = (await s.call('GET', '/api/v1/habitat/workroom', { token: dave.api_token })).json.data;
    expect(w2.waiting_for_you.proposals_to_vote.map((x: { id: string }) => x.id)).not.toContain(p.json.data.id);
    expect(w2.waiting_for_you.questions_to_answer.map((x: { id: string }) => x.id)).not.toContain(q.json.data.id);
    const forCarol = (await s.call('GET', '/api/v1/habitat/workroom', { token: carol.api_token })).json.data;
    expect(forCarol.waiting_for_you.answers_to_your_questions.map((x: { id: string }) => x.id)).toEqual([a.json.data.id]);
    expect(forCarol.waiting_for_you.questions_to_answer.map((x: { id: string }) => x.id)).not.toContain(q.json.data.id);

    clock.advance(5 * HOUR);
    const w3 = (await s.call('GET', '/api/v1/habitat/workroom', { token: dave.api_token })).json.data;
    expect(w3.open.proposals.map((x: { id: string }) => x.id)).not.toContain(p.json.data.id);
    const closed = w3.recent.closed_proposals.find((x: { id: string }) => x.id === p.json.data.id);
    expect(closed).toMatchObject({ state: 'closed', tally: { yes: 1, no: 0, abstain: 0 }, my_vote: 'yes' });
  });
});
