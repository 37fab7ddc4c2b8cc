import 'aws-sdk-client-mock-vitest/extend';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBDocumentClient, GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ForbiddenError, UnauthenticatedError, UnavailableError } from '#core/errors';
import { authenticate } from '#http/authenticate';

describe('authenticate', () => {
  const dynamo = mockClient(DynamoDBDocumentClient);
  let server: Server;
  let issuer: string;
  let sign: (claims: Record<string, unknown>, expiresIn?: string) => Promise<string>;

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(req.url === '/.well-known/jwks.json' ? { keys: [jwk] } : {}));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    sign = (claims, expiresIn = '1h') =>
      new SignJWT({ token_use: 'id', email_verified: true, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer((claims.iss as string) ?? issuer)
        .setAudience((claims.aud as string) ?? 'client-1')
        .setSubject('user-1')
        .setIssuedAt()
        .setExpirationTime(expiresIn)
        .sign(privateKey);
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  beforeEach(() => {
    dynamo.reset();
    vi.stubEnv('TABLE_NAME', 'table');
    vi.stubEnv('AUTH_ISSUER', issuer);
    vi.stubEnv('AUTH_AUDIENCE', 'client-1');
    vi.stubEnv('FOUNDER_EMAILS', 'Founder@Example.com');
  });

  const bearer = async (claims: Record<string, unknown>, expiresIn?: string) => `Bearer ${await sign(claims, expiresIn)}`;

  it('resolves a member from a valid ID token', async () => {
    dynamo.on(GetCommand).resolves({
      Item: { id: 'user-1', email: 'a@example.com', organization_id: 'org_1', role: 'member', created_at: 'x' },
    });

    const principal = await authenticate(await bearer({ email: 'a@example.com' }), 'user');

    expect(principal).toEqual({ kind: 'user', organizationId: 'org_1', user: { id: 'user-1', email: 'a@example.com', role: 'member' } });
  });

  it.each([
    ['an expired token', { email: 'a@example.com' }, '-1m', /expired/],
    ['another audience', { email: 'a@example.com', aud: 'other' }, '1h', /not valid/],
    ['another issuer', { email: 'a@example.com', iss: 'https://evil.example' }, '1h', /not valid/],
    ['an access token', { email: 'a@example.com', token_use: 'access' }, '1h', /ID token/],
    ['a token without email', {}, '1h', /ID token/],
    ['an unverified email address', { email: 'a@example.com', email_verified: false }, '1h', /not verified/],
  ])('refuses %s with 401', async (_case, claims, expiresIn, message) => {
    const error = await authenticate(await bearer(claims, expiresIn), 'principal').catch((e) => e);

    expect(error).toBeInstanceOf(UnauthenticatedError);
    expect(error.message).toMatch(message);
  });

  it('refuses an API key where only users may call', async () => {
    await expect(authenticate('Bearer ask_anything', 'user')).rejects.toThrow(/API keys are not accepted/);
    expect(dynamo).not.toHaveReceivedAnyCommand();
  });

  it('founds an organization for a FOUNDER_EMAILS address on its first request', async () => {
    dynamo.on(GetCommand).resolves({});
    dynamo.on(QueryCommand).resolves({ Items: [] });
    dynamo.on(TransactWriteCommand).resolves({});

    const principal = await authenticate(await bearer({ email: 'founder@example.com' }), 'principal');

    expect(principal).toMatchObject({ kind: 'user', user: { email: 'founder@example.com', role: 'admin' } });
    const items = dynamo.commandCalls(TransactWriteCommand)[0]!.args[0].input.TransactItems!;
    expect(items[1]!.Put!.Item).toMatchObject({ type: 'Organization', id: principal.organizationId, founder: 'user-1' });
  });

  it('answers not_provisioned to a user with no membership, invite or founder grant', async () => {
    dynamo.on(GetCommand).resolves({});
    dynamo.on(QueryCommand).resolves({ Items: [] });

    const error = await authenticate(await bearer({ email: 'nobody@example.com' }), 'principal').catch((e) => e);

    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error.code).toBe('not_provisioned');
    expect(dynamo).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it('answers 503 when the key set cannot be fetched', async () => {
    vi.stubEnv('AUTH_ISSUER', 'http://127.0.0.1:9');

    const error = await authenticate(await bearer({ email: 'a@example.com', iss: 'http://127.0.0.1:9' }), 'principal').catch((e) => e);

    expect(error).toBeInstanceOf(UnavailableError);
  });
});
