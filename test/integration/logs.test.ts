import { readFile } from 'node:fs/promises';
import { describe, expect, inject, it } from 'vitest';
import { newOrganization, request } from './support';

describe('service logs', () => {
  it('record requests but never a credential or a secret value', async () => {
    const canary = `canary-${Date.now()}-do-not-log-0000`;
    const { token } = await newOrganization();
    const key = (await request('POST', '/tokens', { token, body: { name: 'logged' } })).body.key;
    const created = await request('POST', '/secrets', { token: key, body: { name: 'CANARY', value: canary } });
    await request('PUT', '/secrets/CANARY', { token, body: { value: `${canary}-rotated` } });
    await request('POST', '/secrets', { token: key, body: { name: 'CANARY', value: canary } });
    await request('GET', '/whoami', { token: key });

    const log = await readFile(inject('serviceLogFile'), 'utf8');

    expect(log).toContain(`"request_id":"${created.headers['x-request-id']}"`);
    expect(log).not.toContain(canary);
    expect(log).not.toContain(key);
    expect(log).not.toContain(key.slice(4));
    expect(log).not.toContain(token);
    expect(log).not.toContain(token.split('.')[2]);
  });
});
