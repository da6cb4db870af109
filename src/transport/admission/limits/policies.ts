// The rate-limit policies (DECISIONS.md "Rate limits"): their names, defaults and the
// RATE_LIMIT_POLICY override, and the class of an operation (which policies it counts against).
import type { AnyRoute, LimitClass } from '../../runner/route.js';

export type { LimitClass };

export const POLICY_NAMES = [
  'chat_guest',
  'chat_ip',
  'register',
  'recover',
  'write',
  'write_ip',
  'read',
  'bad_token_ip',
  'bad_token_probe',
] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

export interface Policy {
  points: number;
  durationS: number;
}

/** Defaults of DECISIONS.md; recover and write_ip are ours (docs/operator.md). */
export const DEFAULT_POLICIES: Record<PolicyName, Policy> = {
  chat_guest: { points: 6, durationS: 60 },
  chat_ip: { points: 30, durationS: 60 },
  register: { points: 10, durationS: 3600 },
  recover: { points: 10, durationS: 3600 },
  write: { points: 60, durationS: 60 },
  write_ip: { points: 60, durationS: 60 },
  read: { points: 600, durationS: 60 },
  bad_token_ip: { points: 20, durationS: 60 },
  // While an address's bad_token_ip budget is spent, a member token outside the known record is
  // still looked up this often (docs/security.md "A shared address").
  bad_token_probe: { points: 1, durationS: 1 },
};

export function classify(method: string, route: AnyRoute | undefined): LimitClass {
  if (method === 'OPTIONS') return 'none';
  // The class is declared on the route where it differs (chat, register, recover, none).
  return route?.limit ?? (method === 'GET' || method === 'HEAD' ? 'read' : 'write');
}

/** "chat_guest=6/60,register=10/3600": points per window in seconds, per policy. */
export function parsePolicies(spec: string | undefined): Record<PolicyName, Policy> {
  const out = { ...DEFAULT_POLICIES };
  for (const part of (spec ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([a-z_]+)=(\d+)\/(\d+)$/.exec(part);
    if (!m || !(POLICY_NAMES as readonly string[]).includes(m[1] as string) || Number(m[2]) < 1 || Number(m[3]) < 1) {
      throw new Error(`RATE_LIMIT_POLICY: cannot read "${part}" (expected name=points/seconds, names ${POLICY_NAMES.join(', ')})`);
    }
    out[m[1] as PolicyName] = { points: Number(m[2]), durationS: Number(m[3]) };
  }
  return out;
}
