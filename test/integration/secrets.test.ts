import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { describe, expect, inject, it } from 'vitest';
import { newOrganization, request } from './support';

const VALUE = 'sk-canary-0123456789-abcd';

function secretsManager() {
  const env = inject('serviceEnv');
  return new SecretsManagerClient({
    region: env.AWS_REGION,
    endpoint: env.AWS_ENDPOINT_URL_SECRETS_MANAGER,
    credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
  });
}

async function organizationId(token: string): Promise<string> {
  return (await request('GET', '/whoami', { token })).body.organization_id;
}

describe('/secrets', () => {
  it('stores the value in Secrets Manager under the organization prefix and shows it masked', async () => {
    const { token } = await newOrganization();

    const created = await request('POST', '/secrets', { token, body: { name: 'OPENAI_KEY', value: VALUE } });

    expect(created.status).toBe(201);
    expect(created.body).toEqual({ name: 'OPENAI_KEY', masked_value: '****abcd' });
    const stored = await secretsManager().send(
      new GetSecretValueCommand({ SecretId: `${inject('serviceEnv').SECRET_PREFIX}${await organizationId(token)}/OPENAI_KEY` }),
    );
    expect(stored.SecretString).toBe(VALUE);
  });

  it('masks short values entirely', async () => {
    const { token } = await newOrganization();

    const created = await request('POST', '/secrets', { token, body: { name: 'PIN', value: '123456789012345' } });

    expect(created.body.masked_value).toBe('****');
  });

  it('lists, reads, rotates and deletes, never showing the value', async () => {
    const { token } = await newOrganization();
    await request('POST', '/secrets', { token, body: { name: 'b.key', value: VALUE } });
    await request('POST', '/secrets', { token, body: { name: 'a_key', value: 'short' } });

    const listed = await request('GET', '/secrets', { token });
    const read = await request('GET', '/secrets/b.key', { token });
    const rotated = await request('PUT', '/secrets/b.key', { token, body: { value: 'rotated-value-000-wxyz' } });
    const reread = await request('GET', '/secrets/b.key', { token });
    const deleted = await request('DELETE', '/secrets/b.key', { token });

    expect(listed.status).toBe(200);
    expect(listed.body.secrets).toEqual([
      { name: 'a_key', masked_value: '****' },
      { name: 'b.key', masked_value: '****abcd' },
    ]);
    expect(read.body).toEqual({ name: 'b.key', masked_value: '****abcd' });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({ name: 'b.key', masked_value: '****wxyz' });
    expect(reread.body.masked_value).toBe('****wxyz');
    expect(deleted.status).toBe(204);
    expect((await request('GET', '/secrets/b.key', { token })).status).toBe(404);
    const bodies = JSON.stringify([listed.body, read.body, rotated.body, reread.body]);
    expect(bodies).not.toContain(VALUE);
    expect(bodies).not.toContain('rotated-value');
  });

  it('lets a deleted name be created again', async () => {
    const { token } = await newOrganization();
    await request('POST', '/secrets', { token, body: { name: 'AGAIN', value: 'first-value-0000' } });
    await request('DELETE', '/secrets/AGAIN', { token });

    const again = await request('POST', '/secrets', { token, body: { name: 'AGAIN', value: 'second-value-111' } });

    expect(again.status).toBe(201);
    expect(again.body.masked_value).toBe('****-111');
  });

  it('works with an organization API key', async () => {
    const { token } = await newOrganization();
    const key = (await request('POST', '/tokens', { token, body: { name: 'k' } })).body.key;

    expect((await request('POST', '/secrets', { token: key, body: { name: 'VIA_KEY', value: 'v' } })).status).toBe(201);
    expect((await request('GET', '/secrets', { token })).body.secrets).toEqual([{ name: 'VIA_KEY', masked_value: '****' }]);
  });

  it('answers 400 for a name that exists (rotation is PUT)', async () => {
    const { token } = await newOrganization();
    await request('POST', '/secrets', { token, body: { name: 'TAKEN', value: 'one' } });

    const res = await request('POST', '/secrets', { token, body: { name: 'TAKEN', value: 'two' } });

    expect(res.status).toBe(400);
    expect(res.body.message).toContain('PUT');
  });

  it.each([
    ['a name with a space', { name: 'bad name', value: 'v' }, 'name'],
    ['a name of 129 characters', { name: 'n'.repeat(129), value: 'v' }, 'name'],
    ['a missing value', { name: 'OK' }, 'value'],
    ['an empty value', { name: 'OK', value: '' }, 'value'],
    ['a value over 64 KiB', { name: 'OK', value: 'x'.repeat(65_537) }, 'value'],
  ])('answers 400 on POST for %s, and stores nothing', async (_case, body, field) => {
    const { token } = await newOrganization();

    const res = await request('POST', '/secrets', { token, body });

    expect(res.status).toBe(400);
    expect(res.body.message).toContain(field);
    expect((await request('GET', '/secrets', { token })).body.secrets).toEqual([]);
  });

  it('answers 400 for an invalid name in the path and for a bad rotation body', async () => {
    const { token } = await newOrganization();
    await request('POST', '/secrets', { token, body: { name: 'K', value: 'v' } });

    expect((await request('GET', '/secrets/bad%20name', { token })).status).toBe(400);
    expect((await request('PUT', '/secrets/K', { token, body: {} })).status).toBe(400);
    expect((await request('PUT', '/secrets/K', { token, rawBody: 'not json' })).status).toBe(400);
  });

  it('answers 404 for a secret the organization does not have', async () => {
    const { token } = await newOrganization();

    expect((await request('GET', '/secrets/NOPE', { token })).status).toBe(404);
    expect((await request('PUT', '/secrets/NOPE', { token, body: { value: 'v' } })).status).toBe(404);
    expect((await request('DELETE', '/secrets/NOPE', { token })).status).toBe(404);
  });

  it('answers 401 without a credential', async () => {
    expect((await request('GET', '/secrets')).status).toBe(401);
    expect((await request('POST', '/secrets', { body: { name: 'K', value: 'v' } })).status).toBe(401);
    expect((await request('GET', '/secrets/K')).status).toBe(401);
    expect((await request('PUT', '/secrets/K', { body: { value: 'v' } })).status).toBe(401);
    expect((await request('DELETE', '/secrets/K')).status).toBe(401);
  });

  it('keeps one organization from seeing or touching another one secrets', async () => {
    const first = await newOrganization();
    const second = await newOrganization();
    await request('POST', '/secrets', { token: first.token, body: { name: 'SHARED_NAME', value: VALUE } });

    expect((await request('GET', '/secrets', { token: second.token })).body.secrets).toEqual([]);
    expect((await request('GET', '/secrets/SHARED_NAME', { token: second.token })).status).toBe(404);
    expect((await request('PUT', '/secrets/SHARED_NAME', { token: second.token, body: { value: 'hijack' } })).status).toBe(404);
    expect((await request('DELETE', '/secrets/SHARED_NAME', { token: second.token })).status).toBe(404);
    // The same name is free in the other organization and stays separate.
    expect((await request('POST', '/secrets', { token: second.token, body: { name: 'SHARED_NAME', value: 'theirs' } })).status).toBe(201);
    expect((await request('GET', '/secrets/SHARED_NAME', { token: first.token })).body.masked_value).toBe('****abcd');
  });
});
