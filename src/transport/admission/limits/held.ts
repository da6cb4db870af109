// What a credential check holds of its address's bad-token budget (bad-tokens.ts): a point (given
// back when the credential proves valid), the probe's one lookup, or nothing (a token known valid,
// or none that needs a lookup).
export type Held = 'point' | 'probe' | 'none';
