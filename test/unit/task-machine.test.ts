// The task machine as a pure transition table (spec 3.2; DECISIONS.md "Tasks (credits)",
// "Beyond the spec"): every state against every event, and the deadline each waiting state runs.
import { describe, expect, it } from 'vitest';
import { deadlineOf, TASK_INITIAL, TASK_STATES, type TaskEventType, taskNext } from '../../src/machines/task.js';

const EVENTS: TaskEventType[] = ['CLAIM', 'SUBMIT', 'APPROVE', 'CANCEL', 'EXPIRE_UNCLAIMED', 'AUTO_APPROVE', 'CLAIM_LAPSED'];
const ALLOWED: Record<string, string> = {
  'open CLAIM': 'claimed',
  'open CANCEL': 'closed',
  'open EXPIRE_UNCLAIMED': 'closed',
  'claimed SUBMIT': 'delivered',
  'claimed CLAIM_LAPSED': 'open',
  'delivered APPROVE': 'approved',
  'delivered AUTO_APPROVE': 'approved',
};

describe('task machine', () => {
  for (const from of TASK_STATES) {
    for (const ev of EVENTS) {
      const to = ALLOWED[`${from} ${ev}`] ?? null;
      it(`${from} + ${ev} -> ${to ?? 'refused'}`, () => {
        // Asked twice: the second answer is the remembered one (src/machines/lifecycle.ts).
        expect(taskNext(from, ev)).toBe(to);
        expect(taskNext(from, ev)).toBe(to);
      });
    }
  }

  it('starts every task open (spec 3.2), the state a post writes', () => {
    expect(TASK_INITIAL).toBe('open');
  });

  it('runs 7 days while open, 72 h while claimed, 24 h while delivered, nothing once final', () => {
    const H = 3600_000;
    expect(deadlineOf('open')).toEqual({ event: 'EXPIRE_UNCLAIMED', afterMs: 7 * 24 * H });
    expect(deadlineOf('claimed')).toEqual({ event: 'CLAIM_LAPSED', afterMs: 72 * H });
    expect(deadlineOf('delivered')).toEqual({ event: 'AUTO_APPROVE', afterMs: 24 * H });
    expect(deadlineOf('approved')).toBeNull();
    expect(deadlineOf('closed')).toBeNull();
  });

  it('fires from each waiting state exactly the event its deadline names', () => {
    for (const st of TASK_STATES) {
      const d = deadlineOf(st);
      if (d) expect(taskNext(st, d.event)).not.toBeNull();
    }
  });
});
