import { describe, expect, it } from 'vitest';
import { newOrganization, request } from './support';

describe('/tokens', () => {
  it('creates a key shown once, listed and read without it', async () => {
    const { token } = await newOrganization();

    const created = await request('POST', '/tokens', { token, body: { name: 'deploy bot' } });

    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), name: 'deploy bot', created_at: expect.any(String), key: expect.any(String) });
    const record = { id: created.body.id, name: 'deploy bot', created_at: created.body.created_at, key_prefix: created.body.key.slice(0, 12) };
    const listed = await request('GET', '/tokens', { token });
    expect(listed.status).toBe(200);
    expect(listed.body.tokens).toEqual([record]);
    const read = await request('GET', `/tokens/${created.body.id}`, { token });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(record);
    expect(JSON.stringify([listed.body, read.body])).not.toContain(created.body.key);
  });

  it('records when a key was last used', async () => {
    const { token } = await newOrganization();
    const created = (await request('POST', '/tokens', { token, body: { name: 'used' } })).body;

    expect((await request('GET', `/tokens/${created.id}`, { token })).body.last_used_at).toBeUndefined();
    await request('GET', '/whoami', { token: created.key });

    const read = await request('GET', `/tokens/${created.id}`, { token });
    expect(Date.parse(read.body.last_used_at)).toBeGreaterThanOrEqual(Date.parse(created.created_at));
  });

  it('revokes a key at once', async () => {
    const { token } = await newOrganization();
    const created = (await request('POST', '/tokens', { token, body: { name: 'short-lived' } })).body;
    expect((await request('GET', '/whoami', { token: created.key })).status).toBe(200);

    const deleted = await request('DELETE', `/tokens/${created.id}`, { token });

    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeNull();
    expect((await request('GET', '/whoami', { token: created.key })).status).toBe(401);
    expect((await request('GET', `/tokens/${created.id}`, { token })).status).toBe(404);
    expect((await request('DELETE', `/tokens/${created.id}`, { token })).status).toBe(404);
  });

  it.each([
    ['a missing name', {}],
    ['an empty name', { name: '' }],
    ['a name of 101 characters', { name: 'n'.repeat(101) }],
    ['a name that is not a string', { name: 7 }],
  ])('answers 400 for %s', async (_case, body) => {
    const { token } = await newOrganization();

    const res = await request('POST', '/tokens', { token, body });

    expect(res.status).toBe(400);
    expect(res.body.message).toContain('name');
  });

  it('answers 404 for an unknown id', async () => {
    const { token } = await newOrganization();

    expect((await request('GET', '/tokens/tok_unknown', { token })).status).toBe(404);
    expect((await request('DELETE', '/tokens/tok_unknown', { token })).status).toBe(404);
  });

  it('answers 401 to an API key and to no credential on every /tokens route', async () => {
    const { token } = await newOrganization();
    const created = (await request('POST', '/tokens', { token, body: { name: 'k' } })).body;

    for (const credential of [created.key, undefined]) {
      expect((await request('GET', '/tokens', { token: credential })).status).toBe(401);
      expect((await request('POST', '/tokens', { token: credential, body: { name: 'x' } })).status).toBe(401);
      expect((await request('GET', `/tokens/${created.id}`, { token: credential })).status).toBe(401);
      expect((await request('DELETE', `/tokens/${created.id}`, { token: credential })).status).toBe(401);
    }
    expect((await request('GET', `/tokens/${created.id}`, { token })).status).toBe(200);
  });

  it('keeps one organization from seeing or revoking another one keys', async () => {
    const first = await newOrganization();
    const second = await newOrganization();
    const created = (await request('POST', '/tokens', { token: first.token, body: { name: 'private' } })).body;

    expect((await request('GET', '/tokens', { token: second.token })).body.tokens).toEqual([]);
    expect((await request('GET', `/tokens/${created.id}`, { token: second.token })).status).toBe(404);
    expect((await request('DELETE', `/tokens/${created.id}`, { token: second.token })).status).toBe(404);
    expect((await request('GET', '/whoami', { token: created.key })).status).toBe(200);
  });
});
