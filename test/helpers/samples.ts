// What the suites that draw schema-valid requests share (the schema-valid fuzz, the door matrix):
// a seeded generator, so every run sends the same requests, and one ajv (2020-12 with formats)
// that checks a drawn value before it is sent (json-schema-faker does not honour every keyword).
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

/** An ajv for drawn requests: 2020-12, formats, not strict (the documents use vendor keywords). */
export function samplesAjv(opts: { allErrors?: boolean } = {}): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, ...opts });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  return ajv;
}

/** mulberry32: a small seeded generator of numbers in [0, 1). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
