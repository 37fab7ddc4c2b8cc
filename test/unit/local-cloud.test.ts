import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateSecretCommand, GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalCloud } from '#local/cloud';
import { spawnChild, typeScriptEntry } from '#local/child-process';
import { startCloudProcess } from '#local/cloud-process';

let dir: string;

async function answers(url: string): Promise<boolean> {
  return fetch(url).then(
    () => true,
    () => false,
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'local-cloud-test-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('startLocalCloud', { timeout: 30_000 }, () => {
  it('starts every emulator, sets the service environment and stops cleanly', async () => {
    const dataDir = join(dir, 'data');
    const cloud = await startLocalCloud({ port: 0, dataDir, env: { INVOCATION_QUOTA: '7' } });
    const { env } = cloud;
    const sdk = { region: env.AWS_REGION!, maxAttempts: 1 };

    const table = await new DynamoDBClient(sdk).send(new DescribeTableCommand({ TableName: env.TABLE_NAME }));
    await new S3Client(sdk).send(new HeadBucketCommand({ Bucket: env.PAYLOAD_BUCKET }));
    const secrets = new SecretsManagerClient(sdk);
    await secrets.send(new CreateSecretCommand({ Name: `${env.SECRET_PREFIX}probe`, SecretString: 'one' }));
    await secrets.send(new PutSecretValueCommand({ SecretId: `${env.SECRET_PREFIX}probe`, SecretString: 'two' }));
    const secret = await secrets.send(new GetSecretValueCommand({ SecretId: `${env.SECRET_PREFIX}probe` }));
    const jwks = await fetch(`${env.AUTH_ISSUER}/.well-known/jwks.json`);
    const unknown = await fetch(`${cloud.baseUrl}/no/such/route`);

    expect(cloud.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(cloud.dataDir).toBe(dataDir);
    expect(env).toMatchObject({
      AWS_REGION: 'us-east-1',
      TABLE_NAME: 'agent-sessions',
      PAYLOAD_BUCKET: 'agent-sessions-payloads',
      SECRET_PREFIX: 'agent-sessions/',
      AUTH_ISSUER: `${cloud.baseUrl}/local`,
      AUTH_AUDIENCE: 'agent-sessions-local',
      INVOCATION_QUOTA: '7',
      AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
      AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
    });
    for (const name of ['AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_DYNAMODB', 'AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL_SECRETS_MANAGER', 'AWS_ENDPOINT_URL_LAMBDA']) {
      expect(new URL(env[name]!).hostname, name).toBe('127.0.0.1');
      expect(process.env[name]).toBe(env[name]);
    }
    expect(process.env.AWS_PROFILE).toBeUndefined();
    expect(table.Table?.TableStatus).toBe('ACTIVE');
    expect(secret.SecretString).toBe('two');
    expect(jwks.status).toBe(200);
    expect(unknown.status).toBe(404);

    await cloud.stop();

    expect(await answers(cloud.baseUrl)).toBe(false);
    expect(await answers(env.AWS_ENDPOINT_URL_DYNAMODB!)).toBe(false);
    expect(await answers(env.AWS_ENDPOINT_URL_S3!)).toBe(false);
    expect(await answers(env.AWS_ENDPOINT_URL_LAMBDA!)).toBe(false);
    expect((await readdir(dataDir)).sort()).toEqual(['dynamodb', 's3', 'secrets.json', 'signing-key.json']);
  });

  it('refuses a taken port with a one-line reason, before starting anything', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };

    await expect(startLocalCloud({ port, dataDir: null })).rejects.toThrow(`port ${port} is already in use; set PORT to another`);
    blocker.close();
  });

  it('refuses a data dir it cannot write', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, '');

    await expect(startLocalCloud({ port: 0, dataDir: join(file, 'data') })).rejects.toThrow(/^data dir .* is not writable \(ENOTDIR\)/);
  });

  it('refuses a data dir another running instance holds', async () => {
    const held = join(dir, 'held');
    await mkdir(held, { recursive: true });
    // The process that started this test worker lives for the whole run: a stand-in for another instance.
    await writeFile(join(held, '.lock'), String(process.ppid));

    await expect(startLocalCloud({ port: 0, dataDir: held })).rejects.toThrow(
      `data dir ${held} is in use by another instance (pid ${process.ppid}); set DATA_DIR to another`,
    );
  });

  it('stops completely when nothing else keeps its process alive', async () => {
    const child = spawnChild(process.execPath, typeScriptEntry(new URL('./fixtures/start-stop-cloud.ts', import.meta.url)), {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.process.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));

    const exit = await child.exited;

    expect(output).toContain('stopped');
    expect(exit.code).toBe(0);
  });

  it('run in a process of its own, reports why it could not start', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };

    const started = startCloudProcess({ port, dataDir: null, logFile: join(dir, 'service.log') });

    await expect(started).rejects.toThrow(`port ${port} is already in use; set PORT to another`);
    blocker.close();
  });
});
