import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  InvalidArn,
  InvalidExecutionInput,
  InvalidName,
  ListExecutionsCommand,
  SFNClient,
  StartExecutionCommand,
  StateMachineDoesNotExist,
  StopExecutionCommand,
  ValidationException,
  type DescribeExecutionCommandOutput,
} from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invocationStateMachine, type WorkflowFunctions } from '#functions/workflow/definition';
import { LOCAL_CREDENTIALS } from '#local/account';
import { startAwsJsonServer, type AwsJsonServer } from '#local/aws-json';
import { createStepFunctions, stateMachineArn, type StepFunctions, type StepFunctionsOptions } from '#local/step-functions';
import { readJournal } from './fixtures/workflow-journal';
import { isAlive } from '../support/processes';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const FUNCTIONS: WorkflowFunctions = {
  runSteps: 'workflow-run-steps',
  settleAttempt: 'workflow-settle-attempt',
  recordOutcome: 'workflow-record-outcome',
};
const SETTINGS = { attemptTimeoutSeconds: 30, maxAttempts: 3 };

/** The invocation state machine with RunSteps' TimeoutSeconds (the slice's backstop) set to `seconds`. */
function withRunStepsTimeout(seconds: number) {
  const definition = invocationStateMachine(FUNCTIONS, SETTINGS);
  return { ...definition, States: { ...definition.States, RunSteps: { ...definition.States.RunSteps, TimeoutSeconds: seconds } } };
}

// A RunSteps slice times out after 1 s on `fast`, after 30 s on the others.
const MACHINES = [
  { name: 'fast', definition: withRunStepsTimeout(1) },
  { name: 'slow', definition: withRunStepsTimeout(30) },
  { name: 'listed', definition: withRunStepsTimeout(30) },
  // Whole executions timing out after 1 s, and after 100 days (longer than a Node timer holds).
  { name: 'short-lived', definition: { ...withRunStepsTimeout(30), TimeoutSeconds: 1 } },
  { name: 'long-lived', definition: { ...withRunStepsTimeout(30), TimeoutSeconds: 100 * 86_400 } },
  { name: 'missing', definition: invocationStateMachine({ ...FUNCTIONS, runSteps: 'workflow-absent' }, SETTINGS) },
  // A module without a handler export.
  { name: 'no-handler', definition: invocationStateMachine({ ...FUNCTIONS, runSteps: 'workflow-journal' }, SETTINGS) },
];

interface Service {
  server: AwsJsonServer;
  stepFunctions: StepFunctions;
  client: SFNClient;
  stop(): Promise<void>;
}

let root: string;

async function startService(options: Partial<StepFunctionsOptions> = {}): Promise<Service> {
  const stepFunctions = await createStepFunctions({ file: null, stateMachines: MACHINES, functionsDir: FIXTURES, eventTarget: 'workflow-execution-ended', ...options });
  const server = await startAwsJsonServer({ AWSStepFunctions: stepFunctions });
  const client = new SFNClient({ endpoint: server.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  return {
    server,
    stepFunctions,
    client,
    async stop() {
      client.destroy();
      // As the local cloud does: task functions first, then the endpoint (which flushes).
      await stepFunctions.stop();
      await server.stop();
    },
  };
}

/** An execution input with a journal directory of its own. */
async function inputFor(scenario: string) {
  const dir = await mkdtemp(join(root, 'execution-'));
  return { organization_id: 'org-1', invocation_key: 'key-1', dir, scenario };
}

async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}


const waitUntilGone = (pid: number) => waitFor(() => (isAlive(pid) ? undefined : true), 2000);

async function run(client: SFNClient, machine: string, input: object, name?: string): Promise<DescribeExecutionCommandOutput> {
  const { executionArn } = await client.send(
    new StartExecutionCommand({ stateMachineArn: stateMachineArn(machine), input: JSON.stringify(input), ...(name ? { name } : {}) }),
  );
  return waitFor(async () => {
    const described = await client.send(new DescribeExecutionCommand({ executionArn }));
    return described.status === 'RUNNING' ? undefined : described;
  });
}

const functionsCalled = (dir: string) => readJournal(dir).map((entry) => entry.fn);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'local-step-functions-test-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the local Step Functions, through the real SDK client', { timeout: 10_000 }, () => {
  let service: Service;
  let client: SFNClient;

  beforeAll(async () => {
    service = await startService();
    await service.stepFunctions.activate();
    client = service.client;
  });

  afterAll(() => service.stop());

  it('runs the invocation state machine to success, each task in a child process', async () => {
    const input = await inputFor('done');

    const execution = await run(client, 'slow', input, 'success');

    expect(execution).toMatchObject({
      status: 'SUCCEEDED',
      name: 'success',
      stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:slow',
      executionArn: 'arn:aws:states:us-east-1:000000000000:execution:slow:success',
      input: JSON.stringify(input),
    });
    expect(execution.startDate).toBeInstanceOf(Date);
    expect(execution.stopDate!.getTime()).toBeGreaterThanOrEqual(execution.startDate!.getTime());
    // RunSteps records a successful outcome itself: nothing runs after it.
    expect(JSON.parse(execution.output!)).toMatchObject({ ...input, result: { step: { state: 'done' } } });
    expect(functionsCalled(input.dir)).toEqual(['run-steps']);
    expect(readJournal(input.dir).every((entry) => entry.pid !== process.pid)).toBe(true);
  });

  it('loops while RunSteps answers continue, in a sandbox kept warm', async () => {
    const input = await inputFor('loop');

    const execution = await run(client, 'slow', input);

    expect(execution.status).toBe('SUCCEEDED');
    expect(functionsCalled(input.dir)).toEqual(['run-steps', 'run-steps', 'run-steps']);
    const pids = readJournal(input.dir).filter((entry) => entry.fn === 'run-steps').map((entry) => entry.pid);
    expect(new Set(pids).size).toBe(1);
  });

  it('catches a thrown error with its name as Error and Lambda’s JSON as Cause', async () => {
    const input = await inputFor('throw');

    const execution = await run(client, 'slow', input);

    expect(execution.status).toBe('SUCCEEDED');
    expect(functionsCalled(input.dir)).toEqual(['run-steps', 'settle-attempt', 'record-outcome']);
    const output = JSON.parse(execution.output!) as { result: { step: { remaining_ms: number } } };
    expect(output).toMatchObject({ ...input, result: { step: { recorded: true, function_name: 'workflow-record-outcome' } } });
    // A function's timeout is its Task state's: 60 s for the bookkeeping tasks.
    expect(output.result.step.remaining_ms).toBeGreaterThan(55_000);
    expect(output.result.step.remaining_ms).toBeLessThanOrEqual(60_000);
    const caught = readJournal(input.dir).find((entry) => entry.fn === 'settle-attempt')!.event.error!;
    expect(caught.Error).toBe('ProviderError');
    expect(JSON.parse(caught.Cause)).toMatchObject({ errorType: 'ProviderError', errorMessage: 'the model endpoint answered 503' });
  });

  it('fails a task whose process exits before answering with Runtime.ExitError', async () => {
    const input = await inputFor('exit');

    const execution = await run(client, 'slow', input);

    expect(execution.status).toBe('SUCCEEDED');
    const journal = readJournal(input.dir);
    const caught = journal.find((entry) => entry.fn === 'settle-attempt')!.event.error!;
    expect(caught.Error).toBe('Runtime.ExitError');
    expect(JSON.parse(caught.Cause)).toMatchObject({
      errorType: 'Runtime.ExitError',
      errorMessage: expect.stringMatching(/^RequestId: [0-9a-f-]{36} Error: Runtime exited with error: exit status 1$/),
    });
    expect(isAlive(journal.find((entry) => entry.fn === 'run-steps')!.pid)).toBe(false);
  });

  it('fails a task past its TimeoutSeconds with States.Timeout and kills its process', async () => {
    const input = await inputFor('hang');
    const started = Date.now();

    const execution = await run(client, 'fast', input);

    expect(execution.status).toBe('SUCCEEDED');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    const journal = readJournal(input.dir);
    expect(journal.find((entry) => entry.fn === 'settle-attempt')!.event.error!.Error).toBe('States.Timeout');
    await waitUntilGone(journal.find((entry) => entry.fn === 'run-steps')!.pid);
  });

  it('starts another attempt while SettleAttempt says retry, then records the outcome', async () => {
    const input = await inputFor('retry');

    const execution = await run(client, 'slow', input);

    expect(execution.status).toBe('SUCCEEDED');
    const attempt = ['run-steps', 'settle-attempt'];
    expect(functionsCalled(input.dir)).toEqual([...attempt, ...attempt, ...attempt, 'record-outcome']);
  });

  it('fails a task whose function does not exist with Lambda.ResourceNotFoundException', async () => {
    const input = await inputFor('done');

    const execution = await run(client, 'missing', input);

    expect(execution.status).toBe('SUCCEEDED');
    const caught = readJournal(input.dir).find((entry) => entry.fn === 'settle-attempt')!.event.error!;
    expect(caught).toEqual({
      Error: 'Lambda.ResourceNotFoundException',
      Cause: 'Function not found: arn:aws:lambda:us-east-1:000000000000:function:workflow-absent',
    });
  });

  it('fails a task whose module exports no handler as Lambda’s runtime does', async () => {
    const input = await inputFor('done');

    const execution = await run(client, 'no-handler', input);

    expect(execution.status).toBe('SUCCEEDED');
    const caught = readJournal(input.dir).find((entry) => entry.fn === 'settle-attempt')!.event.error!;
    expect(caught.Error).toBe('Runtime.HandlerNotFound');
    expect(JSON.parse(caught.Cause)).toMatchObject({ errorMessage: 'workflow-journal.handler is undefined or not exported' });
  });

  it('fails the execution, past any Catch, when a task answers more than 256 KiB', async () => {
    const input = await inputFor('big');

    const execution = await run(client, 'slow', input);

    expect(execution).toMatchObject({ status: 'FAILED', error: 'States.DataLimitExceeded' });
    // The failure escaped every Catch: its status change goes to the event target, as EventBridge would send it.
    const ended = await waitFor(() => readJournal(input.dir).find((entry) => entry.fn === 'execution-ended'));
    expect(ended.event.error).toEqual({ Error: 'States.DataLimitExceeded', Cause: 'Step Functions Execution Status Change: FAILED' });
    expect(functionsCalled(input.dir)).toEqual(['run-steps', 'execution-ended']);
  });

  it('times out a whole execution past its TimeoutSeconds, and hands the status change on', async () => {
    const input = await inputFor('hang');

    const execution = await run(client, 'short-lived', input);

    expect(execution).toMatchObject({ status: 'TIMED_OUT' });
    expect(execution.error).toBeUndefined();
    const ended = await waitFor(() => readJournal(input.dir).find((entry) => entry.fn === 'execution-ended'));
    expect(ended.event.error).toEqual({ Error: '', Cause: 'Step Functions Execution Status Change: TIMED_OUT' });
  });

  it('runs an execution whose timeout is longer than a Node timer can hold', async () => {
    const input = await inputFor('done');

    const execution = await run(client, 'long-lived', input);

    expect(execution.status).toBe('SUCCEEDED');
  });

  it('StopExecution aborts the execution and kills the process of its task', async () => {
    const input = await inputFor('hang');
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn: stateMachineArn('slow'), input: JSON.stringify(input) }),
    );
    const pid = await waitFor(() => readJournal(input.dir).find((entry) => entry.fn === 'run-steps')?.pid);

    const stopped = await client.send(new StopExecutionCommand({ executionArn, error: 'SessionDeleted', cause: 'deleted' }));

    const execution = await client.send(new DescribeExecutionCommand({ executionArn }));
    expect(execution).toMatchObject({ status: 'ABORTED', error: 'SessionDeleted', cause: 'deleted', stopDate: stopped.stopDate });
    await waitUntilGone(pid);
    const ended = await waitFor(() => readJournal(input.dir).find((entry) => entry.fn === 'execution-ended'));
    expect(ended.event.error).toEqual({ Error: 'SessionDeleted', Cause: 'Step Functions Execution Status Change: ABORTED' });
    // Nothing after the aborted task runs: no SettleAttempt for the killed process.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(functionsCalled(input.dir)).toEqual(['run-steps', 'execution-ended']);
  });

  it('StartExecution is idempotent for the same name and input while the execution runs', async () => {
    const input = JSON.stringify(await inputFor('hang'));
    const start = (text: string) =>
      client.send(new StartExecutionCommand({ stateMachineArn: stateMachineArn('slow'), name: 'same-key', input: text }));

    const first = await start(input);
    const again = await start(input);
    const otherInput = await start('{"other":true}').catch((error: unknown) => error);
    await client.send(new StopExecutionCommand({ executionArn: first.executionArn }));
    const afterEnd = await start(input).catch((error: unknown) => error);

    expect(again).toMatchObject({ executionArn: first.executionArn, startDate: first.startDate });
    expect(otherInput).toBeInstanceOf(ExecutionAlreadyExists);
    expect(afterEnd).toBeInstanceOf(ExecutionAlreadyExists);
    expect((afterEnd as Error).message).toBe(`Execution Already Exists: '${first.executionArn}'`);
  });

  it('lists the executions of a state machine, newest first, by status and in pages', async () => {
    const names = ['one', 'two', 'three'];
    for (const name of names) await run(client, 'listed', await inputFor('done'), name);
    const list = (extra: object) =>
      client.send(new ListExecutionsCommand({ stateMachineArn: stateMachineArn('listed'), ...extra }));

    const firstPage = await list({ maxResults: 2 });
    const secondPage = await list({ maxResults: 2, nextToken: firstPage.nextToken });
    const running = await list({ statusFilter: 'RUNNING' });

    expect(firstPage.executions!.map((execution) => execution.name)).toEqual(['three', 'two']);
    expect(secondPage.executions!.map((execution) => execution.name)).toEqual(['one']);
    expect(secondPage.nextToken).toBeUndefined();
    expect(firstPage.executions![0]).toMatchObject({ status: 'SUCCEEDED', stateMachineArn: stateMachineArn('listed') });
    expect(running.executions).toEqual([]);
  });

  it('answers the errors AWS answers, as the SDK’s exception classes', async () => {
    const missing = 'arn:aws:states:us-east-1:000000000000:execution:slow:nobody';
    const slow = stateMachineArn('slow');
    const fail = (sent: Promise<unknown>) => sent.catch((error: unknown) => error);

    const results = {
      describeMissing: await fail(client.send(new DescribeExecutionCommand({ executionArn: missing }))),
      stopMissing: await fail(client.send(new StopExecutionCommand({ executionArn: missing }))),
      describeNonsense: await fail(client.send(new DescribeExecutionCommand({ executionArn: 'not-an-arn' }))),
      startOnMissingMachine: await fail(client.send(new StartExecutionCommand({ stateMachineArn: stateMachineArn('nowhere') }))),
      nameWithSpace: await fail(client.send(new StartExecutionCommand({ stateMachineArn: slow, name: 'has space' }))),
      nameTooLong: await fail(client.send(new StartExecutionCommand({ stateMachineArn: slow, name: 'x'.repeat(81) }))),
      inputNotJson: await fail(client.send(new StartExecutionCommand({ stateMachineArn: slow, input: '{not json' }))),
      tooManyResults: await fail(client.send(new ListExecutionsCommand({ stateMachineArn: slow, maxResults: 5000 }))),
      errorTooLong: await fail(client.send(new StopExecutionCommand({ executionArn: missing, error: 'e'.repeat(257) }))),
    };

    expect(results.describeMissing).toBeInstanceOf(ExecutionDoesNotExist);
    expect((results.describeMissing as Error).message).toBe(`Execution Does Not Exist: '${missing}'`);
    expect(results.stopMissing).toBeInstanceOf(ExecutionDoesNotExist);
    expect(results.describeNonsense).toBeInstanceOf(InvalidArn);
    expect(results.startOnMissingMachine).toBeInstanceOf(StateMachineDoesNotExist);
    expect(results.nameWithSpace).toBeInstanceOf(InvalidName);
    expect(results.nameTooLong).toBeInstanceOf(InvalidName);
    expect(results.inputNotJson).toBeInstanceOf(InvalidExecutionInput);
    expect(results.tooManyResults).toBeInstanceOf(ValidationException);
    expect(results.errorTooLong).toBeInstanceOf(ValidationException);
  });
});

describe('the function timeout', { timeout: 10_000 }, () => {
  it('kills a function past it and fails its task with Sandbox.Timedout, as Lambda does', async () => {
    const service = await startService({ functionTimeoutSeconds: 1 });
    const input = await inputFor('hang');

    const execution = await run(service.client, 'slow', input);
    await service.stop();

    expect(execution.status).toBe('SUCCEEDED');
    const journal = readJournal(input.dir);
    const caught = journal.find((entry) => entry.fn === 'settle-attempt')!.event.error!;
    expect(caught.Error).toBe('Sandbox.Timedout');
    expect(JSON.parse(caught.Cause)).toMatchObject({ errorMessage: expect.stringMatching(/Task timed out after 1\.00 seconds$/) });
    expect(isAlive(journal.find((entry) => entry.fn === 'run-steps')!.pid)).toBe(false);
  });
});

describe('with a file', { timeout: 15_000 }, () => {
  it('leaves a running execution RUNNING on stop and runs it again from the start after a restart', async () => {
    const file = join(root, 'step-functions.json');
    const input = await inputFor('block-first-start');
    const before = await startService({ file });
    const started = await before.client.send(
      new StartExecutionCommand({ stateMachineArn: stateMachineArn('slow'), name: 'resumed', input: JSON.stringify(input) }),
    );
    const blocked = await waitFor(() => readJournal(input.dir).find((entry) => entry.fn === 'run-steps')?.pid);

    await before.stop();
    await waitUntilGone(blocked);
    const onFile = JSON.parse(await readFile(file, 'utf8')) as { executions: { name: string; status: string }[] };
    const after = await startService({ file });
    const waiting = await after.client.send(new DescribeExecutionCommand({ executionArn: started.executionArn }));
    await after.stepFunctions.activate();
    const execution = await waitFor(async () => {
      const described = await after.client.send(new DescribeExecutionCommand({ executionArn: started.executionArn }));
      return described.status === 'RUNNING' ? undefined : described;
    });
    await after.stop();

    expect(onFile.executions).toMatchObject([{ name: 'resumed', status: 'RUNNING' }]);
    // Resumed only when asked (the local cloud asks once it is up).
    expect(waiting.status).toBe('RUNNING');
    expect(execution).toMatchObject({ status: 'SUCCEEDED', startDate: started.startDate });
    expect(functionsCalled(input.dir)).toEqual(['run-steps', 'run-steps']);
    const ended = JSON.parse(await readFile(file, 'utf8')) as { executions: { status: string }[] };
    expect(ended.executions).toMatchObject([{ status: 'SUCCEEDED' }]);
  });
});
