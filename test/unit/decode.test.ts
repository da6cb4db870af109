// The admission path's decoding (src/transport/admission/decode.ts), the rules every door shares:
// UTF-8 only, nesting at most 32, no prototype keys; and the lenient read of a refused JSON-RPC
// request's envelope, used only to shape the refusal.
import { describe, expect, it } from 'vitest';
import { decodeJson, MAX_DEPTH, refusedEnvelope } from '../../src/transport/admission/decode.js';

const bytes = (s: string) => new TextEncoder().encode(s);
const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return 'accepted';
};

describe('decodeJson', () => {
  it('accepts JSON nested to the limit and refuses one level more', () => {
    const nested = (n: number) => '['.repeat(n) + ']'.repeat(n);
    expect(decodeJson(bytes(nested(MAX_DEPTH)), 'body')).toBeInstanceOf(Array);
    expect(codeOf(() => decodeJson(bytes(nested(MAX_DEPTH + 1)), 'body'))).toBe('INVALID_JSON');
  });
  it('refuses bytes that are not UTF-8 as VALIDATION_FAILED, never as U+FFFD', () => {
    expect(codeOf(() => decodeJson(new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), 'body'))).toBe('VALIDATION_FAILED');
  });
  it('refuses a __proto__ or constructor key at any depth', () => {
    expect(codeOf(() => decodeJson(bytes('{"a":{"__proto__":{"x":1}}}'), 'body'))).toBe('INVALID_JSON');
    expect(codeOf(() => decodeJson(bytes('[{"constructor":{"prototype":1}}]'), 'body'))).toBe('INVALID_JSON');
  });
});

describe('refusedEnvelope', () => {
  it('reads the id and method of a request the decoder refused', () => {
    const req = bytes('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"__proto__":{}}}}');
    expect(codeOf(() => decodeJson(req, 'the request'))).toBe('INVALID_JSON');
    expect(refusedEnvelope(req)).toEqual({ id: 7, method: 'tools/call' });
  });
  it('gives no id for text that is not an object or whose id is neither a string nor a number', () => {
    expect(refusedEnvelope(bytes('not json'))).toEqual({ id: null, method: undefined });
    expect(refusedEnvelope(bytes('[1]'))).toEqual({ id: null, method: undefined });
    expect(refusedEnvelope(bytes('{"id":{"x":1},"method":"ping"}'))).toEqual({ id: null, method: 'ping' });
  });
  it('does not pollute Object.prototype while reading', () => {
    refusedEnvelope(bytes('{"id":"a","__proto__":{"polluted":true}}'));
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });
});
