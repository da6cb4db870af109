// The lean resident runtime against the presence machine: the compiled table is what
// the machine says, and the runtime agrees with a reference model for any interleaving of
// heartbeats and ticks (online iff the last heartbeat is less than 30 minutes old), announcing
// each change exactly once.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import { PRESENCE_TABLE, PresenceRuntime } from '../../src/actors/presence-runtime.js';
import { ONLINE_WINDOW_MS, presenceMachine } from '../../src/machines/presence.js';

const W = ONLINE_WINDOW_MS;

describe('presence machine and its table', () => {
  it('the machine: a heartbeat goes online with a 30-minute timer, which leads offline', () => {
    const [s0] = initialTransition(presenceMachine);
    expect(s0.value).toBe('offline');
    const [s1, actions] = transition(presenceMachine, s0, { type: 'HEARTBEAT' });
    expect(s1.value).toBe('online');
    expect(actions).toEqual([expect.objectContaining({ type: 'xstate.raise', params: expect.objectContaining({ delay: W }) })]);
  });

  it('the compiled table is what the machine says for every state and event', () => {
    const t = PRESENCE_TABLE;
    expect(t.states).toEqual(['offline', 'online']);
    const hb = t.eventIndex('HEARTBEAT');
    const after = t.events.findIndex((e) => e.startsWith('xstate.after.'));
    expect(t.steps[t.stateIndex('offline')]?.[hb]).toEqual({ next: 1, timer: { kind: 'set', delay: W, event: after } });
    expect(t.steps[t.stateIndex('online')]?.[hb]).toEqual({ next: 1, timer: { kind: 'set', delay: W, event: after } });
    expect(t.steps[t.stateIndex('online')]?.[after]).toEqual({ next: 0, timer: { kind: 'cancel' } });
    expect(t.steps[t.stateIndex('offline')]?.[after]).toBeNull();
  });
});

describe('PresenceRuntime', () => {
  it('online, refreshed, offline at 30 minutes after the last heartbeat, announced once', () => {
    const seen: [number, string, number][] = [];
    const rt = new PresenceRuntime((id, state, at) => seen.push([id, state, at]));
    const t0 = 1_000_000_000_000;
    expect(rt.heartbeat(7, t0)).toBe(true);
    expect(rt.heartbeat(7, t0 + 10 * 60_000)).toBe(false);
    rt.tick(t0 + W);
    expect(rt.isOnline(7)).toBe(true);
    rt.tick(t0 + 10 * 60_000 + W - 1);
    expect(rt.isOnline(7)).toBe(true);
    rt.tick(t0 + 10 * 60_000 + W);
    expect(rt.isOnline(7)).toBe(false);
    rt.tick(t0 + 3 * W);
    expect(seen).toEqual([
      [7, 'online', t0],
      [7, 'offline', t0 + 10 * 60_000 + W],
    ]);
    expect(rt.onlineCount).toBe(0);
  });

  it('restores without announcing, and drops what already expired', () => {
    const seen: string[] = [];
    const rt = new PresenceRuntime((_id, s) => seen.push(s));
    const now = 5_000_000_000_000;
    rt.restore(1, now - W + 1000, now);
    rt.restore(2, now - W - 1, now);
    expect(rt.isOnline(1)).toBe(true);
    expect(rt.isOnline(2)).toBe(false);
    expect(rt.onlineCount).toBe(1);
    expect(seen).toEqual([]);
    rt.tick(now + 1000);
    expect(seen).toEqual(['offline']);
  });

  it('agrees with a reference model for any interleaving of heartbeats and ticks', () => {
    // Steps near the window's edge and within one second find off-by-a-bucket errors.
    const dt = fc.oneof(
      fc.integer({ min: 0, max: 2 * W }),
      fc.integer({ min: W - 2000, max: W + 2000 }),
      fc.integer({ min: 0, max: 3000 }),
    );
    const op = fc.oneof(
      fc.record({ kind: fc.constant('beat' as const), id: fc.integer({ min: 1, max: 8 }), dt }),
      fc.record({ kind: fc.constant('tick' as const), dt }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        let now = 1_700_000_000_000;
        const changes = new Map<number, string[]>();
        const rt = new PresenceRuntime((id, s) => changes.set(id, [...(changes.get(id) ?? []), s]));
        const last = new Map<number, number>();
        const model = new Map<number, boolean>();
        const expected = new Map<number, string[]>();
        const note = (id: number, s: string) => expected.set(id, [...(expected.get(id) ?? []), s]);
        for (const o of ops) {
          now += o.dt;
          if (o.kind === 'beat') {
            const wasOnline = model.get(o.id) === true;
            expect(rt.heartbeat(o.id, now)).toBe(!wasOnline);
            if (!wasOnline) note(o.id, 'online');
            model.set(o.id, true);
            last.set(o.id, now);
          } else {
            rt.tick(now);
            for (const [id, t] of last) {
              if (model.get(id) && t + W <= now) {
                model.set(id, false);
                note(id, 'offline');
              }
            }
          }
          for (const [id, on] of model) expect(rt.isOnline(id)).toBe(on);
          expect(rt.onlineCount).toBe([...model.values()].filter(Boolean).length);
        }
        expect(changes).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });
});
