import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '#local/gateway';
import { createSignIn, LOCAL_AUDIENCE, subjectFor } from '#local/sign-in';

let dir: string;

/** A gateway serving only the sign-in routes, with the issuer at its own base URL. */
async function serve(keyFile: string | null): Promise<{ gateway: Gateway; baseUrl: string }> {
  let baseUrl = '';
  const signIn = createSignIn({ issuer: () => `${baseUrl}/local`, keyFile });
  await signIn.loaded;
  const gateway = await startGateway({ host: '127.0.0.1', port: 0, routes: signIn.routes });
  baseUrl = `http://127.0.0.1:${gateway.address.port}`;
  return { gateway, baseUrl };
}

async function signIn(baseUrl: string, body: string) {
  const response = await fetch(`${baseUrl}/local/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: response.status, body: (await response.json()) as { token?: string; message?: string } };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'local-sign-in-test-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the local sign-in', () => {
  it('issues an ID-token-shaped JWT that verifies against the served JWKS', async () => {
    const { gateway, baseUrl } = await serve(null);
    const issuer = `${baseUrl}/local`;

    const answer = await signIn(baseUrl, JSON.stringify({ email: 'Dev@LocalHost' }));
    const { payload, protectedHeader } = await jwtVerify(answer.body.token!, createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`)), {
      issuer,
      audience: LOCAL_AUDIENCE,
    });

    expect(answer.status).toBe(200);
    expect(protectedHeader).toMatchObject({ alg: 'RS256', kid: expect.any(String) });
    expect(payload).toMatchObject({
      email: 'dev@localhost',
      email_verified: true,
      token_use: 'id',
      sub: subjectFor('dev@localhost'),
    });
    expect(payload.exp! - payload.iat!).toBe(12 * 3600);
    await gateway.stop();
  });

  it('derives a stable UUID-shaped subject from the lowercased email', () => {
    expect(subjectFor('A@Example.test')).toBe(subjectFor('a@example.test'));
    expect(subjectFor('a@example.test')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(subjectFor('b@example.test')).not.toBe(subjectFor('a@example.test'));
  });

  it('answers 400 naming the field for a bad body', async () => {
    const { gateway, baseUrl } = await serve(null);

    const notJson = await signIn(baseUrl, 'not json');
    const missing = await signIn(baseUrl, '{}');
    const invalid = await signIn(baseUrl, JSON.stringify({ email: 'nobody' }));
    const wrongType = await signIn(baseUrl, JSON.stringify({ email: 42 }));

    expect(notJson.status).toBe(400);
    expect(notJson.body.message).toMatch(/email/);
    expect(missing).toEqual({ status: 400, body: { message: 'email is required' } });
    expect(invalid).toEqual({ status: 400, body: { message: 'email must be a valid email address' } });
    expect(wrongType.status).toBe(400);
    await gateway.stop();
  });

  it('keeps its key in a file only its owner can read, so tokens survive a restart', async () => {
    const keyFile = join(dir, 'signing-key.json');
    const first = await serve(keyFile);
    const token = (await signIn(first.baseUrl, JSON.stringify({ email: 'a@example.test' }))).body.token!;
    const jwks = (await (await fetch(`${first.baseUrl}/local/.well-known/jwks.json`)).json()) as { keys: Record<string, unknown>[] };
    await first.gateway.stop();

    const second = await serve(keyFile);
    const jwksAgain = await (await fetch(`${second.baseUrl}/local/.well-known/jwks.json`)).json();

    expect(jwksAgain).toEqual(jwks);
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: decodeProtectedHeader(token).kid });
    expect(jwks.keys[0]!.d).toBeUndefined();
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    await second.gateway.stop();
  });
});
