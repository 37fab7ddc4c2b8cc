import 'aws-sdk-client-mock-vitest/extend';
import { InvokeCommand, LambdaClient, ResourceNotFoundException, type InvokeCommandOutput } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { AgentConfig } from '#contracts/agent';
import type { ToolboxContext } from '#functions/agent/tools/types';
import { createRedactor } from '#functions/agent/secrets';
import { terminalTools, workspaceOf } from '#functions/agent/tools/terminal';
import type { Tool } from '#functions/agent/types';

const model = { name: 'm', provider: { name: 'openai' as const } };
const snapshot = { get: 'https://bucket.example/get', put: 'https://bucket.example/put' };
const context = (organizationId = 'org_a', invocationKey = 'key-1') =>
  ({
    organizationId,
    invocationKey,
    secrets: new Map(),
    redactor: createRedactor(new Map()),
    signal: new AbortController().signal,
    workspaceSnapshotUrls: async () => snapshot,
  }) satisfies ToolboxContext;
// The client wraps payload bytes in a blob adapter; the tool reads them as bytes only.
const payload = (value: unknown) => Buffer.from(JSON.stringify(value)) as unknown as InvokeCommandOutput['Payload'];
const sent = (lambda: ReturnType<typeof mockClient>) => JSON.parse(Buffer.from(lambda.commandCalls(InvokeCommand)[0]!.args[0].input.Payload as Uint8Array).toString('utf8'));

async function terminal(agent: AgentConfig = { model, tools: { terminal: {} } }): Promise<Tool> {
  const set = await terminalTools(agent, context());
  return set!.tools[0]!;
}

describe('the terminal tool', () => {
  const lambda = mockClient(LambdaClient);

  beforeEach(() => {
    lambda.reset();
    vi.stubEnv('SANDBOX_FUNCTION_NAME', 'sandbox-fn');
  });

  it('is there only when the configuration asks for it', async () => {
    expect(await terminalTools({ model }, context())).toBeUndefined();
    expect(await terminalTools({ model, tools: {} }, context())).toBeUndefined();
    const tool = await terminal();
    expect(tool.name).toBe('terminal');
    expect(tool.parameters).toMatchObject({ type: 'object', required: ['command'] });
  });

  it("sends the command to the sandbox function as the invocation's tenant, with its workspace, snapshot URLs and the configured timeout", async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload({ exit_code: 0, stdout: 'hi\n', stderr: '', timed_out: false, workspace: 'new' }) });
    const tool = await terminal({ model, tools: { terminal: { timeout_seconds: 7 } } });

    const result = await tool.call({ command: 'echo hi' }, { signal: new AbortController().signal });

    const workspace = workspaceOf('org_a', 'key-1');
    expect(lambda).toHaveReceivedCommandWith(InvokeCommand, { FunctionName: 'sandbox-fn', TenantId: workspace });
    expect(sent(lambda)).toEqual({ workspace, command: 'echo hi', timeout_seconds: 7, snapshot });
    expect(result).toBe('exit code: 0\n--- stdout ---\nhi\n--- stderr ---\n(empty)');
  });

  it('tells the model plainly when its files are gone or may not last, and nothing when they are safe', async () => {
    const answer = (extra: object) => ({ StatusCode: 200, Payload: payload({ exit_code: 0, stdout: '', stderr: '', timed_out: false, workspace: 'kept', ...extra }) });
    lambda
      .on(InvokeCommand)
      .resolvesOnce(answer({ workspace: 'restored', snapshot: { status: 'saved', bytes: 120 } }))
      .resolvesOnce(answer({ snapshot: { status: 'too_large' } }))
      .resolvesOnce(answer({ workspace: 'lost' }))
      .resolvesOnce(answer({ snapshot: { status: 'failed', error: 'the snapshot could not be stored (503)' } }));
    const tool = await terminal();
    const call = () => tool.call({ command: 'ls' }, { signal: new AbortController().signal }) as Promise<string>;

    const [restored, tooLarge, lost, failed] = [await call(), await call(), await call(), await call()];

    expect(restored).toMatch(/^exit code: 0/);
    expect(tooLarge).toMatch(/^note: the working directory is now larger than 64 MiB compressed: its files stay for now, but may be lost before a later command; keep it smaller to keep them\nexit code: 0/);
    expect(lost).toMatch(/^note: the working directory was reset before this command: it had grown past 64 MiB compressed, so its files could not be kept and are gone\nexit code: 0/);
    expect(failed).toMatch(/^note: the working directory could not be saved \(the snapshot could not be stored \(503\)\): its files stay for now, but may be lost before a later command\nexit code: 0/);
  });

  it('runs commands for 30 s when the configuration does not say', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload({ exit_code: 0, stdout: '', stderr: '', timed_out: false }) });

    await (await terminal()).call({ command: 'true' }, { signal: new AbortController().signal });

    expect(sent(lambda).timeout_seconds).toBe(30);
  });

  it('says when a command timed out and when output was cut', async () => {
    lambda.on(InvokeCommand).resolves({
      StatusCode: 200,
      Payload: payload({ exit_code: null, signal: 'SIGKILL', stdout: 'partial', stderr: 'e', timed_out: true, stdout_truncated: true }),
    });

    const result = await (await terminal()).call({ command: 'sleep 99' }, { signal: new AbortController().signal });

    expect(result).toBe(
      'timed out after 30 s: the command and everything it started were killed\n' +
        '--- stdout (the first 32768 bytes; the rest was dropped) ---\npartial\n--- stderr ---\ne',
    );
  });

  it('throws the function error of the sandbox, for the model to read', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, FunctionError: 'Unhandled', Payload: payload({ errorType: 'Sandbox.Timedout', errorMessage: 'Task timed out' }) });

    await expect((await terminal()).call({ command: 'x' }, { signal: new AbortController().signal })).rejects.toThrow(
      'the sandbox could not run the command: Sandbox.Timedout: Task timed out',
    );
  });

  it('lets a failure of Lambda itself through as an error', async () => {
    lambda.on(InvokeCommand).rejects(new ResourceNotFoundException({ message: 'Function not found', $metadata: {} }));

    await expect((await terminal()).call({ command: 'x' }, { signal: new AbortController().signal })).rejects.toThrow('Function not found');
  });

  it.each([[{}], [{ command: '' }], [{ command: 42 }], [null], [{ command: 'x'.repeat(128 * 1024) }]])(
    'refuses arguments without a usable command %#, invoking nothing',
    async (args) => {
      await expect((await terminal()).call(args, { signal: new AbortController().signal })).rejects.toThrow(/command/);
      expect(lambda).not.toHaveReceivedCommand(InvokeCommand);
    },
  );

  it('gives each invocation of each organization its own workspace', () => {
    const ids = [workspaceOf('org_a', 'k'), workspaceOf('org_b', 'k'), workspaceOf('org_a', 'k2'), workspaceOf('org_a', 'k')];

    expect(ids[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(ids).size).toBe(3);
  });
});
