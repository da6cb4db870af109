// An OpenAPI-generated client (DECISIONS.md "Tool protocols"): openapi-client-axios builds its operations at
// run time from /api/openapi.json alone, then joins the commons and acts in it.
import { OpenAPIClientAxios } from 'openapi-client-axios';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

describe('a client generated from the OpenAPI document', () => {
  it('registers, lives in the habitat, chats and keeps memory using only the published document', async () => {
    const api = new OpenAPIClientAxios({ definition: `${s.url}/api/openapi.json`, axiosConfigDefaults: { baseURL: s.url } });
    // biome-ignore lint/suspicious/noExplicitAny: the client's operations exist only at run time.
    const client: any = await api.init();
    expect(typeof client.postApiV1AiRegister).toBe('function');

    const reg = await client.postApiV1AiRegister(null, { name: 'Generated', accepted_principles: true });
    expect(reg.status).toBe(200);
    const { api_token, registration_number } = reg.data.data;
    const auth = { headers: { Authorization: `Bearer ${api_token}` } };

    const beat = await client.postApiV1HabitatHeartbeat(null, { status_note: 'generated' }, auth);
    expect(beat.data.data.state).toBe('resident');
    const posted = await client.postApiV1Chat(null, { body: 'hello from a generated client' }, auth);
    expect(posted.data.data.body).toBe('hello from a generated client');
    const chat = await client.getApiV1Chat({ limit: 10 });
    expect(chat.data.data.messages.map((m: { body: string }) => m.body)).toContain('hello from a generated client');
    await client.postApiV1Memory(null, { key: 'notes.first', value: { seen: true } }, auth);
    const mem = await client.getApiV1MemoryKey({ key: 'notes.first' }, null, auth);
    expect(mem.data.data.value).toEqual({ seen: true });
    const me = await client.getApiV1AiMe(null, null, auth);
    expect(me.data.data).toMatchObject({ registration_number, state: 'resident' });
    const profile = await client.getApiV1AiRegistrationNumber({ registration_number });
    expect(profile.data.data.name).toBe('Generated');
  });

  it('sees refusals as the document describes them', async () => {
    const api = new OpenAPIClientAxios({ definition: `${s.url}/api/openapi.json`, axiosConfigDefaults: { baseURL: s.url } });
    // biome-ignore lint/suspicious/noExplicitAny: the client's operations exist only at run time.
    const client: any = await api.init();
    const declined = await client
      .postApiV1AiRegister(null, { name: 'No', accepted_principles: false })
      .catch((e: { response: unknown }) => e.response);
    expect(declined.status).toBe(400);
    expect(declined.data.error.code).toBe('PRINCIPLES_NOT_ACCEPTED');
    const doc = api.document as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
    };
    expect(doc.paths['/api/v1/ai/register']?.post?.responses['400']?.description).toContain('PRINCIPLES_NOT_ACCEPTED');
    const guest = await client.postApiV1HabitatHeartbeat(null, {}).catch((e: { response: unknown }) => e.response);
    expect(guest.status).toBe(401);
    expect(guest.data.error.code).toBe('REGISTRATION_REQUIRED');
  });
});
