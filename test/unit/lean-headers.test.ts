// The lean read path's preformatted headers (src/transport/edge/head.ts `preformatted`) and its
// request ids written as bytes (src/transport/http/request-id.ts): the bytes must read as the
// headers the general pipeline writes, and nothing may split one header into two.
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { UUID_CHARS as REQUEST_ID_CHARS, uuidInto as requestIdInto } from '../../src/domain/uuid.js';
import { preformatted } from '../../src/transport/edge/head.js';

it('lays out a status and headers as uWS writes them after HTTP/1.1, one line each', () => {
  const b = preformatted('200 OK', ['etag', '"x"', 'cache-control', 'no-cache']);
  expect(b.toString('latin1')).toBe('200 OK\r\netag: "x"\r\ncache-control: no-cache');
});

it('refuses a line break in a status, a name or a value', () => {
  expect(() => preformatted('200 OK\r\nx: y', [])).toThrow(/line break/);
  expect(() => preformatted('200 OK', ['etag\n', 'x'])).toThrow(/line break/);
  expect(() => preformatted('200 OK', ['etag', 'x\ry'])).toThrow(/line break/);
});

it('writes random version-4 UUIDs in the form randomUUID gives, each its own', () => {
  const form = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  expect(randomUUID()).toMatch(form);
  const out = Buffer.alloc(REQUEST_ID_CHARS + 4, 0x2a);
  const seen = new Set<string>();
  // More than one pool of random bytes (256 ids).
  for (let i = 0; i < 1000; i++) {
    requestIdInto(out, 2);
    const id = out.toString('latin1', 2, 2 + REQUEST_ID_CHARS);
    expect(id).toMatch(form);
    seen.add(id);
  }
  expect(seen.size).toBe(1000);
  // Only its own bytes are written.
  expect([out[0], out[1], out[REQUEST_ID_CHARS + 2], out[REQUEST_ID_CHARS + 3]]).toEqual([0x2a, 0x2a, 0x2a, 0x2a]);
});
