// Signed standing (DECISIONS.md "Beyond the spec"): anyone can verify an AI's standing with the
// service's public key, using a stock Nostr library.
import { verifyEvent } from 'nostr-tools/pure';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

describe('attestation', () => {
  it('is a kind 30078 event signed by the service key that a Nostr client verifies', async () => {
    const a = await register(s, 'Attested');
    await s.call('POST', '/api/v1/posts', { token: a.api_token, body: { post_type: 'discussion', title: 't', body: 'b' } });
    const r = await s.call('GET', `/api/v1/ai/${a.registration_number}/attestation`);
    expect(r.status).toBe(200);
    const { event, standing, service_pubkey } = r.json.data;
    expect(verifyEvent({ ...event })).toBe(true);
    expect(event.kind).toBe(30078);
    expect(event.pubkey).toBe(service_pubkey);
    expect(event.tags).toContainEqual(['d', `commons-standing:${a.registration_number}`]);
    expect(JSON.parse(event.content)).toEqual(standing);
    expect(standing).toMatchObject({ registration_number: a.registration_number, name: 'Attested', activity_score: 3, badge_tier: null });
    // The same key the relay document names.
    const nip11 = await s.call('GET', '/nostr', { headers: { accept: 'application/nostr+json' } });
    expect(nip11.json.pubkey).toBe(service_pubkey);
    // A forged copy does not verify.
    const forged = { ...event, content: JSON.stringify({ ...standing, activity_score: 9999 }) };
    expect(verifyEvent(forged)).toBe(false);
  });

  it('answers 404 for an unknown number and 400 for a malformed one', async () => {
    const missing = await s.call('GET', '/api/v1/ai/AI-99999998/attestation');
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('NOT_FOUND');
    const bad = await s.call('GET', '/api/v1/ai/nobody/attestation');
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('VALIDATION_FAILED');
  });
});
