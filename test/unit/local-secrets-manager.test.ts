import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BatchGetSecretValueCommand,
  CreateSecretCommand,
  DeleteSecretCommand,
  DescribeSecretCommand,
  GetSecretValueCommand,
  InvalidNextTokenException,
  InvalidParameterException,
  InvalidRequestException,
  ListSecretsCommand,
  PutSecretValueCommand,
  ResourceExistsException,
  ResourceNotFoundException,
  RestoreSecretCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '#local/account';
import { startAwsJsonServer, type AwsJsonServer } from '#local/aws-json';
import { createSecretsManager } from '#local/secrets-manager';

let dir: string;
let file: string;
let server: AwsJsonServer;
let client: SecretsManagerClient;

async function start(): Promise<void> {
  server = await startAwsJsonServer({ secretsmanager: await createSecretsManager({ file }) });
  client = new SecretsManagerClient({ endpoint: server.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
}

async function stop(): Promise<void> {
  client.destroy();
  await server.stop();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'local-secrets-test-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  file = join(dir, `${Math.random().toString(36).slice(2)}.json`);
  await start();
});

afterEach(stop);

describe('the local Secrets Manager, through the real SDK client', () => {
  it('creates a secret and reads it back by name, by ARN and by partial ARN', async () => {
    const created = await client.send(new CreateSecretCommand({ Name: 'org/a', SecretString: 's3cret', Description: 'd' }));

    const byName = await client.send(new GetSecretValueCommand({ SecretId: 'org/a' }));
    const byArn = await client.send(new GetSecretValueCommand({ SecretId: created.ARN }));
    const byPartialArn = await client.send(new GetSecretValueCommand({ SecretId: created.ARN!.slice(0, -7) }));

    expect(created.ARN).toMatch(/^arn:aws:secretsmanager:us-east-1:000000000000:secret:org\/a-[A-Za-z0-9]{6}$/);
    expect(created.VersionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(byName).toMatchObject({ Name: 'org/a', SecretString: 's3cret', VersionId: created.VersionId, VersionStages: ['AWSCURRENT'] });
    expect(byName.CreatedDate).toBeInstanceOf(Date);
    expect(byArn.SecretString).toBe('s3cret');
    expect(byPartialArn.SecretString).toBe('s3cret');
  });

  it('refuses a second secret of the same name with ResourceExistsException', async () => {
    await client.send(new CreateSecretCommand({ Name: 'dup', SecretString: 'x' }));

    await expect(client.send(new CreateSecretCommand({ Name: 'dup', SecretString: 'y' }))).rejects.toBeInstanceOf(ResourceExistsException);
  });

  it('answers ResourceNotFoundException for a missing secret', async () => {
    const error = await client.send(new GetSecretValueCommand({ SecretId: 'missing' })).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ResourceNotFoundException);
    expect((error as ResourceNotFoundException).$metadata.httpStatusCode).toBe(400);
  });

  it('rotates with PutSecretValue: the new version is AWSCURRENT, the old one AWSPREVIOUS', async () => {
    const first = await client.send(new CreateSecretCommand({ Name: 'rot', SecretString: 'one' }));

    const put = await client.send(new PutSecretValueCommand({ SecretId: 'rot', SecretString: 'two' }));
    const current = await client.send(new GetSecretValueCommand({ SecretId: 'rot' }));
    const previous = await client.send(new GetSecretValueCommand({ SecretId: 'rot', VersionStage: 'AWSPREVIOUS' }));
    const described = await client.send(new DescribeSecretCommand({ SecretId: 'rot' }));

    expect(put.VersionStages).toEqual(['AWSCURRENT']);
    expect(current).toMatchObject({ SecretString: 'two', VersionId: put.VersionId });
    expect(previous).toMatchObject({ SecretString: 'one', VersionId: first.VersionId });
    expect(described.VersionIdsToStages).toEqual({ [first.VersionId!]: ['AWSPREVIOUS'], [put.VersionId!]: ['AWSCURRENT'] });
  });

  it('treats a repeated ClientRequestToken as a retry, and a different value under it as a conflict', async () => {
    await client.send(new CreateSecretCommand({ Name: 'idem', SecretString: 'one' }));
    const token = '11111111-2222-3333-4444-555555555555';

    const first = await client.send(new PutSecretValueCommand({ SecretId: 'idem', SecretString: 'two', ClientRequestToken: token }));
    const retry = await client.send(new PutSecretValueCommand({ SecretId: 'idem', SecretString: 'two', ClientRequestToken: token }));
    const conflict = await client
      .send(new PutSecretValueCommand({ SecretId: 'idem', SecretString: 'three', ClientRequestToken: token }))
      .catch((error: unknown) => error);

    expect(first.VersionId).toBe(token);
    expect(retry.VersionId).toBe(token);
    expect(conflict).toBeInstanceOf(ResourceExistsException);
    expect((await client.send(new GetSecretValueCommand({ SecretId: 'idem', VersionStage: 'AWSPREVIOUS' }))).SecretString).toBe('one');
  });

  it('describes a secret without its value', async () => {
    await client.send(new CreateSecretCommand({ Name: 'desc', SecretString: 'hidden', Description: 'about' }));

    const described = await client.send(new DescribeSecretCommand({ SecretId: 'desc' }));

    expect(described).toMatchObject({ Name: 'desc', Description: 'about' });
    expect(described.LastChangedDate).toBeInstanceOf(Date);
    expect(JSON.stringify(described)).not.toContain('hidden');
  });

  it('schedules a deletion: reads and re-creation fail as on AWS, until restored', async () => {
    await client.send(new CreateSecretCommand({ Name: 'sched', SecretString: 'x' }));

    const deleted = await client.send(new DeleteSecretCommand({ SecretId: 'sched', RecoveryWindowInDays: 7 }));
    const read = await client.send(new GetSecretValueCommand({ SecretId: 'sched' })).catch((error: unknown) => error);
    const recreate = await client.send(new CreateSecretCommand({ Name: 'sched', SecretString: 'y' })).catch((error: unknown) => error);
    const described = await client.send(new DescribeSecretCommand({ SecretId: 'sched' }));
    const listed = await client.send(new ListSecretsCommand({}));
    const listedWithPlanned = await client.send(new ListSecretsCommand({ IncludePlannedDeletion: true }));

    expect(deleted.DeletionDate!.getTime() - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
    expect(read).toBeInstanceOf(InvalidRequestException);
    expect(recreate).toBeInstanceOf(InvalidRequestException);
    expect(described.DeletedDate).toBeInstanceOf(Date);
    expect(listed.SecretList).toEqual([]);
    expect(listedWithPlanned.SecretList?.map((secret) => secret.Name)).toEqual(['sched']);

    await client.send(new RestoreSecretCommand({ SecretId: 'sched' }));
    expect((await client.send(new GetSecretValueCommand({ SecretId: 'sched' }))).SecretString).toBe('x');
  });

  it('deletes at once with ForceDeleteWithoutRecovery, freeing the name', async () => {
    await client.send(new CreateSecretCommand({ Name: 'gone', SecretString: 'x' }));

    await client.send(new DeleteSecretCommand({ SecretId: 'gone', ForceDeleteWithoutRecovery: true }));

    await expect(client.send(new GetSecretValueCommand({ SecretId: 'gone' }))).rejects.toBeInstanceOf(ResourceNotFoundException);
    await client.send(new CreateSecretCommand({ Name: 'gone', SecretString: 'again' }));
    expect((await client.send(new GetSecretValueCommand({ SecretId: 'gone' }))).SecretString).toBe('again');
  });

  it('rejects a recovery window together with forced deletion', async () => {
    await client.send(new CreateSecretCommand({ Name: 'both', SecretString: 'x' }));

    const both = client.send(new DeleteSecretCommand({ SecretId: 'both', ForceDeleteWithoutRecovery: true, RecoveryWindowInDays: 7 }));

    await expect(both).rejects.toBeInstanceOf(InvalidParameterException);
  });

  it('lists by name prefix, in pages', async () => {
    for (const name of ['p/1', 'p/2', 'p/3', 'q/1', 'p/4', 'p/5']) {
      await client.send(new CreateSecretCommand({ Name: name, SecretString: name }));
    }

    const names: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await client.send(
        new ListSecretsCommand({ Filters: [{ Key: 'name', Values: ['p/'] }], MaxResults: 2, NextToken: token }),
      );
      names.push(...(page.SecretList ?? []).map((secret) => secret.Name!));
      token = page.NextToken;
      pages++;
    } while (token);

    expect(names).toEqual(['p/1', 'p/2', 'p/3', 'p/4', 'p/5']);
    expect(pages).toBe(3);
    await expect(client.send(new ListSecretsCommand({ NextToken: 'garbage' }))).rejects.toBeInstanceOf(InvalidNextTokenException);
  });

  it('reads several secrets with BatchGetSecretValue, reporting the missing ones', async () => {
    await client.send(new CreateSecretCommand({ Name: 'b1', SecretString: 'one' }));

    const batch = await client.send(new BatchGetSecretValueCommand({ SecretIdList: ['b1', 'nope'] }));

    expect(batch.SecretValues?.map((value) => value.SecretString)).toEqual(['one']);
    expect(batch.Errors).toEqual([expect.objectContaining({ SecretId: 'nope', ErrorCode: 'ResourceNotFoundException' })]);
  });

  it('answers an unknown target with UnknownOperationException, in the AWS JSON error shape', async () => {
    const response = await fetch(server.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'secretsmanager.RotateSecret' },
      body: '{}',
    });

    expect(response.status).toBe(400);
    expect(response.headers.get('x-amzn-errortype')).toBe('UnknownOperationException');
    expect(await response.json()).toMatchObject({ __type: 'UnknownOperationException' });
  });

  it('keeps secrets across a restart, in a file only its owner can read', async () => {
    await client.send(new CreateSecretCommand({ Name: 'kept', SecretString: 'persisted' }));
    await client.send(new CreateSecretCommand({ Name: 'scheduled', SecretString: 'x' }));
    await client.send(new DeleteSecretCommand({ SecretId: 'scheduled' }));

    await stop();
    await start();

    expect((await client.send(new GetSecretValueCommand({ SecretId: 'kept' }))).SecretString).toBe('persisted');
    await expect(client.send(new GetSecretValueCommand({ SecretId: 'scheduled' }))).rejects.toBeInstanceOf(InvalidRequestException);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8')).secrets).toHaveLength(2);
  });
});
