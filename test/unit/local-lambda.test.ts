import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvokeCommand, LambdaClient, ResourceNotFoundException } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '#local/account';
import { startLambda, type LambdaEndpoint } from '#local/lambda';

const FIXTURE = fileURLToPath(new URL('./fixtures/lambda-function.ts', import.meta.url));
const SANDBOX = fileURLToPath(new URL('../../functions/sandbox/run-command.ts', import.meta.url));
const CANARY = 'service-canary-7f3a';

let lambda: LambdaEndpoint;
let client: LambdaClient;
let tmpDir: string;

const decode = (payload: Uint8Array | undefined) => JSON.parse(Buffer.from(payload ?? []).toString('utf8'));
const invoke = (FunctionName: string, event: unknown, TenantId?: string) =>
  client.send(new InvokeCommand({ FunctionName, Payload: Buffer.from(JSON.stringify(event)), ...(TenantId ? { TenantId } : {}) }));

beforeAll(async () => {
  // The service's own configuration, which no function of the endpoint may see.
  process.env.SERVICE_SECRET_CANARY = CANARY;
  tmpDir = await mkdtemp(join(tmpdir(), 'local-lambda-test-'));
  lambda = await startLambda({
    tmpDir,
    functions: [
      { name: 'fixture', module: FIXTURE, timeoutSeconds: 1 },
      { name: 'per-tenant', module: FIXTURE, timeoutSeconds: 5, perTenant: true },
      { name: 'sandbox', module: SANDBOX, timeoutSeconds: 30 },
    ],
  });
  client = new LambdaClient({ endpoint: lambda.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
});

afterAll(async () => {
  delete process.env.SERVICE_SECRET_CANARY;
  client.destroy();
  await lambda.stop();
  await rm(tmpDir, { recursive: true, force: true });
});

describe('the local Lambda endpoint', () => {
  it('runs the function in a process of its own and answers with its result', async () => {
    const result = await invoke('fixture', { hello: 'world' });

    expect(result.StatusCode).toBe(200);
    expect(result.FunctionError).toBeUndefined();
    expect(result.ExecutedVersion).toBe('$LATEST');
    const payload = decode(result.Payload);
    expect(payload).toMatchObject({ event: { hello: 'world' }, functionName: 'fixture' });
    expect(payload.env).not.toContain('SERVICE_SECRET_CANARY');
    expect(payload.env.filter((name: string) => name.startsWith('AWS_'))).toEqual([]);
  });

  it('takes the function by its ARN too', async () => {
    const result = await invoke('arn:aws:lambda:us-east-1:000000000000:function:fixture', {});

    expect(decode(result.Payload).functionName).toBe('fixture');
  });

  it('reports a thrown error as an unhandled function error', async () => {
    const result = await invoke('fixture', { fail: 'out of range' });

    expect(result.StatusCode).toBe(200);
    expect(result.FunctionError).toBe('Unhandled');
    expect(decode(result.Payload)).toMatchObject({ errorType: 'RangeError', errorMessage: 'out of range' });
  });

  it('ends a function that outlives its timeout', async () => {
    const result = await invoke('fixture', { sleep_ms: 5000 });

    expect(result.FunctionError).toBe('Unhandled');
    expect(decode(result.Payload)).toMatchObject({ errorType: 'Sandbox.Timedout', errorMessage: expect.stringContaining('Task timed out after 1.00 seconds') });
  });

  it('serves a tenant-isolated function per tenant: environments are never shared between tenants, and context.tenantId names it', async () => {
    const pidOf = async (tenant: string) => {
      const answer = decode((await invoke('per-tenant', {}, tenant)).Payload);
      expect(answer.tenantId).toBe(tenant);
      return answer.pid as number;
    };

    const [blue, green] = await Promise.all([pidOf('blue'), pidOf('green')]);
    const [blueAgain, greenAgain] = [await pidOf('blue'), await pidOf('green')];

    expect(blue).not.toBe(green);
    expect(blueAgain).toBe(blue);
    expect(greenAgain).toBe(green);
  });

  it('asks a tenant-isolated function for its TenantId, and refuses one for any other function', async () => {
    await expect(invoke('per-tenant', {})).rejects.toThrow(/TenantId/);
    await expect(invoke('fixture', {}, 'blue')).rejects.toThrow(/TenantId/);
    await expect(invoke('per-tenant', {}, 'not/valid\ttenant')).rejects.toThrow(/TenantId/);
  });

  it('answers ResourceNotFoundException for a function it does not have', async () => {
    await expect(invoke('absent', {})).rejects.toBeInstanceOf(ResourceNotFoundException);
  });

  it('runs the sandbox function, its workspace in its execution environment\'s own temporary directory', async () => {
    const workspace = createHash('sha256').update('local-lambda-test').digest('hex');

    const result = await invoke('sandbox', { workspace, command: 'pwd; env', timeout_seconds: 5 });

    expect(result.FunctionError).toBeUndefined();
    const { exit_code, stdout } = decode(result.Payload);
    expect(exit_code).toBe(0);
    expect(stdout.split('\n')[0]).toMatch(new RegExp(`^${tmpDir}/env-[^/]+/workspaces/${workspace}$`));
    expect(stdout).not.toContain(CANARY);
    expect(stdout).not.toMatch(/^AWS_/m);
  });
});

describe('with a fresh environment for every invocation (a test setting)', () => {
  it('runs each invocation of a tenant in a new environment, and ends it after', async () => {
    const fresh = await startLambda({ tmpDir, freshEnvironments: true, functions: [{ name: 'per-tenant', module: FIXTURE, timeoutSeconds: 5, perTenant: true }] });
    const freshClient = new LambdaClient({ endpoint: fresh.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
    try {
      const pidOf = async () =>
        decode((await freshClient.send(new InvokeCommand({ FunctionName: 'per-tenant', TenantId: 'blue', Payload: Buffer.from('{}') }))).Payload).pid as number;

      const [first, second] = [await pidOf(), await pidOf()];

      expect(second).not.toBe(first);
    } finally {
      freshClient.destroy();
      await fresh.stop();
    }
  });
});
