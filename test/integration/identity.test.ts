import { describe, expect, it } from 'vitest';
import { newOrganization, request, signIn, uniqueEmail } from './support';

describe('GET /health', () => {
  it('answers 200 without a credential', async () => {
    const res = await request('GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['x-request-id']).toBeTruthy();
  });
});

describe('GET /whoami', () => {
  it('names a signed-in user, their organization and role', async () => {
    const { token, email } = await newOrganization();

    const res = await request('GET', '/whoami', { token });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: 'user', user: { email, role: 'admin' } });
    expect(res.body.organization_id).toMatch(/^org_/);
    expect(res.body.user.id).toBeTruthy();
  });

  it('names an API key and its organization', async () => {
    const { token } = await newOrganization();
    const me = (await request('GET', '/whoami', { token })).body;
    const created = (await request('POST', '/tokens', { token, body: { name: 'ci' } })).body;

    const res = await request('GET', '/whoami', { token: created.key });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      kind: 'api_key',
      organization_id: me.organization_id,
      api_key: { id: created.id, name: 'ci' },
    });
  });

  it.each([
    ['no credential', undefined],
    ['a malformed header', 'Basic abc'],
    ['a token that is not a JWT', 'Bearer not-a-jwt'],
    ['an unknown API key', 'Bearer ask_unknownunknownunknown'],
  ])('answers 401 for %s', async (_case, authorization) => {
    const res = await request('GET', '/whoami', { headers: authorization ? { authorization } : {} });
    expect(res.status).toBe(401);
    expect(typeof res.body.message).toBe('string');
  });

  it('answers 401 for a token signed with the right claims but a foreign key', async () => {
    const { token } = await newOrganization();
    const [header, payload] = token.split('.');
    const forged = `${header}.${payload}.${Buffer.from('not the signature').toString('base64url')}`;

    expect((await request('GET', '/whoami', { token: forged })).status).toBe(401);
  });

  it('answers 403 not_provisioned for a user with no organization and no invite', async () => {
    const token = await signIn(uniqueEmail('stranger'));

    const res = await request('GET', '/whoami', { token });

    expect(res.status).toBe(403);
    expect(res.body.code).toBe('not_provisioned');
    expect(res.body.message).toBeTruthy();
  });
});

describe('GET /models', () => {
  it('lists the catalogue for a user and for an API key', async () => {
    const { token } = await newOrganization();
    const key = (await request('POST', '/tokens', { token, body: { name: 'models' } })).body.key;

    for (const credential of [token, key]) {
      const res = await request('GET', '/models', { token: credential });
      expect(res.status).toBe(200);
      expect(res.body.models.length).toBeGreaterThan(0);
      for (const model of res.body.models) {
        expect(Object.keys(model).sort()).toEqual(expect.arrayContaining(['name', 'provider']));
        expect(Object.keys(model).length === 2 || Object.keys(model).length === 4).toBe(true);
      }
      // The default catalogue prices its models, in USD per million tokens.
      expect(res.body.models).toContainEqual({ provider: 'openai', name: 'gpt-4.1-mini', input_usd_per_mtok: 0.4, output_usd_per_mtok: 1.6 });
      // A catalogued model without prices has no price fields (the test deployment adds some).
      expect(res.body.models).toContainEqual({ provider: 'bedrock', name: 'test.providers-answer-v1:0' });
    }
  });

  it('answers 401 without a credential', async () => {
    expect((await request('GET', '/models')).status).toBe(401);
  });
});
