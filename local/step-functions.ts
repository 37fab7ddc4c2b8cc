/**
 * A Step Functions stand-in behind the AWS JSON endpoint (`AWSStepFunctions.*` targets):
 * StartExecution (idempotent by name and input, as on AWS), DescribeExecution,
 * StopExecution and ListExecutions, for state machines registered at start. Executions
 * run their definition in aws-local-stepfunctions. Every `lambda:invoke` Task runs its
 * function in a child process (a sandbox, `lambda-sandboxes.ts`), so crashes, timeouts and
 * stops end the process as they end a Lambda execution environment, with the errors
 * Step Functions reports for them. The functions are the bundles CDK deploys; sandboxes
 * stay warm between invocations of the same function, as Lambda's do, some are kept
 * initialized ahead of need (`keepWarm`), and one spare waits with Node started.
 *
 * With a file, executions are recorded there (atomically) whenever one starts or ends;
 * those still RUNNING when the process stopped are run again from the start, with the
 * same input, once `activate()` is called.
 */
import { randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ExecutionError,
  ExecutionTimeoutError,
  StateMachine,
  type RunOptions,
  type StateMachineDefinition,
} from 'aws-local-stepfunctions';
import { EXECUTION_STATUS_CHANGE, UNSETTLED_EXECUTION_STATUSES } from '#functions/workflow/definition';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from './account';
import { AwsServiceError, type AwsJsonService } from './aws-json';
import { LocalCloudError } from './errors';
import { createSandboxPool, functionArn, type Sandbox } from './lambda-sandboxes';
import { stateFile } from './state-file';

// aws-local-stepfunctions calls Promise.withResolvers (Node 22+) when it arms a Task's
// timeout. On Node 20 that throws, and `States.ALL` catchers swallow it: every Task fails.
const promiseStatics = Promise as PromiseConstructor & { withResolvers?: unknown };
promiseStatics.withResolvers ??= function withResolvers<T>() {
  let resolve!: (value: T | PromiseLike<T>) => void;
  let reject!: (reason?: unknown) => void;
  const promise = new Promise<T>((resolvePromise, rejectPromise) => {
    resolve = resolvePromise;
    reject = rejectPromise;
  });
  return { promise, resolve, reject };
};

/** A state machine the local cloud registers at start. */
export interface StateMachineEntry {
  name: string;
  /** The Amazon States Language definition, as an object. */
  definition: object;
  roleArn?: string;
}

export interface StepFunctionsOptions {
  /** Where executions persist; null keeps them in memory only. */
  file: string | null;
  stateMachines: StateMachineEntry[];
  /**
   * The task functions' modules by function name: their bundles (`local/bundles.ts`), run
   * by the bundled `runner` on plain Node, as Lambda runs them.
   */
  functions?: ReadonlyMap<string, string>;
  /** The bundled runner of the execution environments (see `SandboxPoolOptions.runner`). */
  runner?: string;
  /** Environments to keep initialized per function name, ahead of invocations. */
  keepWarm?: Readonly<Record<string, number>>;
  /** Instead of `functions`: a directory of TypeScript modules, `<FunctionName>.ts` (the tests' fixtures). */
  functionsDir?: string;
  /**
   * The function that receives "Step Functions Execution Status Change" events of
   * executions ending FAILED, TIMED_OUT or ABORTED, as the EventBridge rule CDK deploys
   * delivers them: asynchronously, retried a few times. With `stateMachine`, only that
   * machine's executions (the rule names one).
   */
  eventTarget?: string | { functionName: string; stateMachine: string };
  /**
   * Every task function's Lambda timeout. Default: the TimeoutSeconds of the Task state that
   * invokes it (at most 900 s, Lambda's maximum), as the CDK app configures them.
   */
  functionTimeoutSeconds?: number;
}

export interface StepFunctions extends AwsJsonService {
  /**
   * To call once everything the task functions use is up: readies the spare and the
   * kept-warm environments, and runs again, from the start, the executions that were
   * RUNNING when the file was last written. Resolves once the kept-warm environments are
   * initialized.
   */
  activate(): Promise<void>;
  /** Kills every sandbox and leaves running executions RUNNING on file; safe to call twice. */
  stop(): Promise<void>;
}

type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

interface ExecutionRecord {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  input: string;
  status: ExecutionStatus;
  /** Epoch milliseconds. */
  startDate: number;
  stopDate?: number;
  output?: string;
  error?: string;
  cause?: string;
}

interface RegisteredMachine {
  arn: string;
  name: string;
  roleArn?: string;
  machine: StateMachine;
  /** The lambda:invoke Task states, with their TimeoutSeconds in milliseconds. */
  tasks: { state: string; timeoutMs: number }[];
  /** The execution's TimeoutSeconds in milliseconds, kept here (see `register`). */
  timeoutMs?: number;
}

/** An execution being run by this process. */
interface Run {
  record: ExecutionRecord;
  abort(): void;
  /** The sandboxes running its tasks right now. */
  sandboxes: Set<Sandbox>;
  /** Set once it may start no more tasks (stopped, ended, or the service stopping). */
  cancelled?: Error;
  /** The service stopped under it: its outcome is not recorded, it resumes next start. */
  abandoned?: boolean;
}

type TaskHandlers = NonNullable<NonNullable<RunOptions['overrides']>['taskResourceLocalHandlers']>;
type JsonValue = Parameters<TaskHandlers[string]>[0];

const LAMBDA_INVOKE = 'arn:aws:states:::lambda:invoke';
const ARN_PREFIX = `arn:aws:states:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}`;
const MAX_FUNCTION_TIMEOUT_MS = 900_000;
// The library's own default when a Task sets no TimeoutSeconds (AWS has none).
const DEFAULT_TASK_TIMEOUT_SECONDS = 60;
// The event target is one of the service's functions; EventBridge retries a failing one.
const EVENT_TARGET_TIMEOUT_MS = 60_000;
const EVENT_DELIVERIES = 4;
// Step Functions passes at most 256 KiB between states.
const MAX_DATA_BYTES = 256 * 1024;
// AWS forgets closed executions after 90 days.
const RETENTION_MS = 90 * 86_400_000;
const NAME = /^[A-Za-z0-9_-]{1,80}$/;
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const STATE_MACHINE_ARN = new RegExp(`^${ARN_PREFIX}:stateMachine:[A-Za-z0-9_-]{1,80}$`);
const EXECUTION_ARN = new RegExp(`^${ARN_PREFIX}:execution:[A-Za-z0-9_-]{1,80}:[A-Za-z0-9_-]{1,80}$`);
const STATUSES: readonly string[] = ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED', 'PENDING_REDRIVE'];

/** The ARN of a registered state machine. */
export function stateMachineArn(name: string): string {
  return `${ARN_PREFIX}:stateMachine:${name}`;
}

const seconds = (epochMs: number) => epochMs / 1000;

/**
 * An error as a Task state sees it: the library's Catch and Retry match `name` as Error and
 * pass `message` as Cause; a terminal error (as on AWS) matches neither.
 */
function taskError(name: string, cause: string, terminal = false): Error {
  const error = new Error(cause);
  error.name = name;
  return terminal ? Object.assign(error, { isRetryable: false, isCatchable: false }) : error;
}

/** Checks what the local interpreter can run faithfully and finds the Tasks to dispatch. */
function register(entry: StateMachineEntry): RegisteredMachine {
  const definition = entry.definition as StateMachineDefinition;
  const refuse = (reason: string) => new LocalCloudError(`state machine ${entry.name}: ${reason}`);
  if (!NAME.test(entry.name)) throw refuse('the name must match [A-Za-z0-9_-]{1,80}');
  const tasks: RegisteredMachine['tasks'] = [];
  for (const [state, definitionOfState] of Object.entries(definition.States ?? {})) {
    if (definitionOfState.Type === 'Map' || definitionOfState.Type === 'Parallel') {
      throw refuse(`state ${state}: ${definitionOfState.Type} states do not run locally`);
    }
    if (definitionOfState.Type !== 'Task') continue;
    // Any other resource would make the library call a real AWS account.
    if (definitionOfState.Resource !== LAMBDA_INVOKE) throw refuse(`state ${state}: only ${LAMBDA_INVOKE} tasks run locally`);
    if (definitionOfState.TimeoutSecondsPath !== undefined) throw refuse(`state ${state}: TimeoutSecondsPath is not supported locally`);
    tasks.push({ state, timeoutMs: (definitionOfState.TimeoutSeconds ?? DEFAULT_TASK_TIMEOUT_SECONDS) * 1000 });
  }
  // The interpreter times an execution with one setTimeout, which Node caps at about 24.8
  // days (a longer one fires at once); the execution timeout is kept here instead.
  const { TimeoutSeconds: executionTimeout, ...interpreted } = definition;
  let machine: StateMachine;
  try {
    machine = new StateMachine(interpreted as StateMachineDefinition);
  } catch (error) {
    throw refuse((error as Error).message);
  }
  return {
    arn: stateMachineArn(entry.name),
    name: entry.name,
    roleArn: entry.roleArn,
    machine,
    tasks,
    ...(executionTimeout !== undefined ? { timeoutMs: executionTimeout * 1000 } : {}),
  };
}

// Node's timers hold at most 2^31 - 1 ms.
const MAX_TIMER_MS = 2_147_483_647;

/** A timer for any delay, however long (re-armed in steps Node can hold), not keeping the process alive. */
function longTimeout(callback: () => void, delayMs: number): { clear(): void } {
  let timer: NodeJS.Timeout;
  const deadline = Date.now() + Math.max(0, delayMs);
  const arm = () => {
    const left = deadline - Date.now();
    timer = setTimeout(left > MAX_TIMER_MS ? arm : callback, Math.min(Math.max(0, left), MAX_TIMER_MS)).unref();
  };
  arm();
  return { clear: () => clearTimeout(timer) };
}

function requiredString(input: Record<string, unknown>, field: string): string {
  const value = input[field];
  if (typeof value !== 'string' || value === '') throw new AwsServiceError('ValidationException', `${field} is required`);
  return value;
}

function optionalString(input: Record<string, unknown>, field: string, maxLength: number): string | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length > maxLength) {
    throw new AwsServiceError('ValidationException', `${field} must be a string of at most ${maxLength} characters`);
  }
  return value;
}

function summary(record: ExecutionRecord) {
  return {
    executionArn: record.executionArn,
    stateMachineArn: record.stateMachineArn,
    name: record.name,
    status: record.status,
    startDate: seconds(record.startDate),
    ...(record.stopDate !== undefined ? { stopDate: seconds(record.stopDate) } : {}),
  };
}

/** Newest first, as AWS lists executions. */
function newestFirst(a: ExecutionRecord, b: ExecutionRecord): number {
  return b.startDate - a.startDate || (a.executionArn < b.executionArn ? -1 : a.executionArn > b.executionArn ? 1 : 0);
}

function encodeToken(record: ExecutionRecord): string {
  return Buffer.from(JSON.stringify([record.startDate, record.executionArn])).toString('base64url');
}

function decodeToken(token: string): Pick<ExecutionRecord, 'startDate' | 'executionArn'> {
  try {
    const value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && typeof value[0] === 'number' && typeof value[1] === 'string') {
      return { startDate: value[0], executionArn: value[1] };
    }
  } catch {
    // Fall through to the error below.
  }
  throw new AwsServiceError('InvalidToken', 'Invalid Token');
}

/** What an execution's `result` promise settling means for its record. */
function outcomeOf(error: unknown): Pick<ExecutionRecord, 'status' | 'error' | 'cause'> {
  // As on AWS, a TIMED_OUT execution has no error and cause of its own.
  if (error instanceof ExecutionTimeoutError) return { status: 'TIMED_OUT' };
  const failure = error instanceof ExecutionError && error.cause instanceof Error ? error.cause : (error as Error);
  return { status: 'FAILED', error: failure.name, cause: failure.message };
}

async function loadRecords(file: string): Promise<ExecutionRecord[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  try {
    const oldest = Date.now() - RETENTION_MS;
    return (JSON.parse(text) as { executions: ExecutionRecord[] }).executions.filter((record) => (record.stopDate ?? Infinity) >= oldest);
  } catch {
    throw new LocalCloudError(`${file} is not a valid executions file; move it away to start afresh`);
  }
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (stats) => stats.isFile(),
    () => false,
  );
}

/** Creates the Step Functions service, loading earlier executions from the file if there is one. */
export async function createStepFunctions(options: StepFunctionsOptions): Promise<StepFunctions> {
  const { functions, functionsDir } = options;
  if (!functions === !functionsDir) throw new LocalCloudError('the local Step Functions needs either function bundles or a directory of modules');
  const functionTimeoutMs = options.functionTimeoutSeconds === undefined ? undefined : options.functionTimeoutSeconds * 1000;
  const machines = new Map(options.stateMachines.map((entry) => [stateMachineArn(entry.name), register(entry)]));
  const executions = new Map<string, ExecutionRecord>();
  for (const record of options.file ? await loadRecords(options.file) : []) executions.set(record.executionArn, record);
  const interrupted = [...executions.values()].filter((record) => record.status === 'RUNNING');
  const runs = new Map<string, Run>();
  const pool = createSandboxPool(options.runner ? { runner: options.runner } : {});
  let stopped = false;

  const { persist, flush } = stateFile(options.file, () => ({ executions: [...executions.values()] }));

  /** Stops a run from starting tasks and kills the sandboxes of the ones it is running. */
  function cancel(run: Run, reason: Error): void {
    run.cancelled ??= reason;
    for (const sandbox of run.sandboxes) sandbox.kill(reason);
  }

  async function moduleOf(functionName: unknown): Promise<{ name: string; module: string }> {
    const name = typeof functionName === 'string' ? functionName : '';
    const module = functions ? functions.get(name) : join(functionsDir!, `${name}.ts`);
    if (!FUNCTION_NAME.test(name) || module === undefined || !(await isFile(module))) {
      throw taskError('Lambda.ResourceNotFoundException', `Function not found: ${functionArn(name)}`);
    }
    return { name, module };
  }

  /** The lambda:invoke integration: `{FunctionName, Payload}` in, `{StatusCode, Payload}` out. */
  async function invokeTask(run: Run, state: string, timeoutMs: number, input: JsonValue): Promise<JsonValue> {
    // The library fails the state with States.Timeout at TimeoutSeconds but never cancels the
    // task, so the sandbox is killed here. Arming this timer after the library's (one
    // microtask later) lets its States.Timeout, not this kill, be what the state sees.
    await null;
    let sandbox: Sandbox | undefined;
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      sandbox?.kill(taskError('States.Timeout', 'States.Timeout'));
    }, timeoutMs);
    try {
      const { FunctionName, Payload } = (input ?? {}) as { FunctionName?: unknown; Payload?: unknown };
      const { name, module } = await moduleOf(FunctionName);
      // A Retry wait cut short by an abort re-enters the task: nothing may start then.
      if (run.cancelled) throw run.cancelled;
      if (expired) throw taskError('States.Timeout', 'States.Timeout');
      sandbox = pool.acquire(name);
      run.sandboxes.add(sandbox);
      const awsRequestId = randomUUID();
      const payload = await sandbox.invoke(
        { module, event: Payload ?? null, functionName: name, invokedFunctionArn: functionArn(name), awsRequestId },
        functionTimeoutMs ?? Math.min(timeoutMs, MAX_FUNCTION_TIMEOUT_MS),
      );
      // Checked on the function's result, which the service's states pass on whole.
      if (Buffer.byteLength(payload) > MAX_DATA_BYTES) {
        const cause = `The state/task '${state}' returned a result with a size exceeding the maximum number of bytes service limit.`;
        throw taskError('States.DataLimitExceeded', cause, true);
      }
      return { ExecutedVersion: '$LATEST', Payload: JSON.parse(payload) as JsonValue, StatusCode: 200 };
    } finally {
      clearTimeout(timer);
      if (sandbox) {
        run.sandboxes.delete(sandbox);
        pool.release(sandbox);
      }
    }
  }

  /** Records how a run ended, unless it was stopped or abandoned meanwhile. */
  function end(run: Run, outcome: Pick<ExecutionRecord, 'status' | 'output' | 'error' | 'cause'>): void {
    cancel(run, new Error('the execution ended'));
    runs.delete(run.record.executionArn);
    if (run.abandoned || run.record.status !== 'RUNNING') return;
    Object.assign(run.record, outcome, { stopDate: Date.now() });
    persist().catch((error: unknown) => logError('could not record an execution', error));
    emitStatusChange(run.record);
  }

  function logError(message: string, error: unknown): void {
    console.error(JSON.stringify({ level: 'error', source: 'local-step-functions', message, error: String(error) }));
  }

  /**
   * Hands the status change of an execution that ended unsettled to the event target, as
   * EventBridge would: in the background, retried with backoff, never holding the execution.
   */
  function emitStatusChange(record: ExecutionRecord): void {
    const rule = typeof options.eventTarget === 'string' ? { functionName: options.eventTarget } : options.eventTarget;
    if (!rule || !(UNSETTLED_EXECUTION_STATUSES as readonly string[]).includes(record.status)) return;
    if ('stateMachine' in rule && record.stateMachineArn !== stateMachineArn(rule.stateMachine)) return;
    const target = rule.functionName;
    const event = {
      version: '0',
      id: randomUUID(),
      'detail-type': EXECUTION_STATUS_CHANGE,
      source: 'aws.states',
      account: LOCAL_ACCOUNT_ID,
      time: new Date(record.stopDate ?? Date.now()).toISOString(),
      region: LOCAL_REGION,
      resources: [record.executionArn],
      detail: {
        executionArn: record.executionArn,
        stateMachineArn: record.stateMachineArn,
        name: record.name,
        status: record.status,
        startDate: record.startDate,
        stopDate: record.stopDate ?? null,
        input: record.input,
        output: record.output ?? null,
        error: record.error ?? null,
        cause: record.cause ?? null,
      },
    };
    void (async () => {
      for (let delivery = 1; !stopped; delivery++) {
        try {
          const { module } = await moduleOf(target);
          const sandbox = pool.acquire(target);
          try {
            await sandbox.invoke({ module, event, functionName: target, invokedFunctionArn: functionArn(target), awsRequestId: randomUUID() }, EVENT_TARGET_TIMEOUT_MS);
          } finally {
            pool.release(sandbox);
          }
          return;
        } catch (error) {
          if (delivery >= EVENT_DELIVERIES || stopped) {
            logError(`could not deliver the status change of ${record.executionArn}`, error);
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** delivery));
        }
      }
    })();
  }

  function run(record: ExecutionRecord): void {
    if (stopped) return;
    const registered = machines.get(record.stateMachineArn);
    const started: Run = { record, abort: () => undefined, sandboxes: new Set() };
    if (!registered) {
      end(started, { status: 'FAILED', error: 'States.Runtime', cause: `State Machine Does Not Exist: '${record.stateMachineArn}'` });
      return;
    }
    const taskResourceLocalHandlers: TaskHandlers = Object.fromEntries(
      registered.tasks.map(({ state, timeoutMs }) => [state, (input: JsonValue) => invokeTask(started, state, timeoutMs, input)]),
    );
    const execution = registered.machine.run(JSON.parse(record.input) as JsonValue, {
      overrides: { taskResourceLocalHandlers },
      context: {
        Execution: { Id: record.executionArn, Name: record.name, ...(registered.roleArn ? { RoleArn: registered.roleArn } : {}) },
        StateMachine: { Id: registered.arn, Name: registered.name },
      },
    });
    started.abort = execution.abort;
    runs.set(record.executionArn, started);
    // Counted from the execution's start: one resumed after a restart keeps its deadline.
    const timeout = registered.timeoutMs === undefined ? undefined : longTimeout(() => {
      // As on AWS, a TIMED_OUT execution has no error and cause of its own.
      end(started, { status: 'TIMED_OUT' });
      execution.abort();
    }, record.startDate + registered.timeoutMs - Date.now());
    execution.result.then(
      (output) => end(started, { status: 'SUCCEEDED', output: JSON.stringify(output) }),
      (error: unknown) => end(started, outcomeOf(error)),
    ).finally(() => timeout?.clear());
  }

  function findExecution(input: Record<string, unknown>): ExecutionRecord {
    const arn = requiredString(input, 'executionArn');
    if (!EXECUTION_ARN.test(arn)) throw new AwsServiceError('InvalidArn', `Invalid Arn: '${arn}'`);
    const record = executions.get(arn);
    if (!record) throw new AwsServiceError('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`);
    return record;
  }

  function findMachine(input: Record<string, unknown>): RegisteredMachine {
    const arn = requiredString(input, 'stateMachineArn');
    if (!STATE_MACHINE_ARN.test(arn)) throw new AwsServiceError('InvalidArn', `Invalid Arn: '${arn}'`);
    const machine = machines.get(arn);
    if (!machine) throw new AwsServiceError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${arn}'`);
    return machine;
  }

  const operations: Record<string, (input: Record<string, unknown>) => Promise<unknown>> = {
    async StartExecution(input) {
      const machine = findMachine(input);
      const name = input.name === undefined ? randomUUID() : input.name;
      if (typeof name !== 'string' || !NAME.test(name)) throw new AwsServiceError('InvalidName', `Invalid Name: '${String(name)}'`);
      const text = input.input === undefined || input.input === null ? '{}' : input.input;
      try {
        if (typeof text !== 'string') throw new Error('not a string');
        JSON.parse(text);
      } catch {
        throw new AwsServiceError('InvalidExecutionInput', 'Invalid State Machine Execution Input: input must be a JSON text');
      }
      const executionArn = `${ARN_PREFIX}:execution:${machine.name}:${name}`;
      const existing = executions.get(executionArn);
      if (existing) {
        // As on AWS (Standard): the same name and input while it runs is the same execution.
        if (existing.status === 'RUNNING' && existing.input === text) return { executionArn, startDate: seconds(existing.startDate) };
        throw new AwsServiceError('ExecutionAlreadyExists', `Execution Already Exists: '${executionArn}'`);
      }
      const record: ExecutionRecord = {
        executionArn,
        stateMachineArn: machine.arn,
        name,
        input: text,
        status: 'RUNNING',
        startDate: Date.now(),
      };
      executions.set(executionArn, record);
      await persist();
      run(record);
      return { executionArn, startDate: seconds(record.startDate) };
    },

    async DescribeExecution(input) {
      const record = findExecution(input);
      return {
        ...summary(record),
        input: record.input,
        inputDetails: { included: true },
        ...(record.output !== undefined ? { output: record.output, outputDetails: { included: true } } : {}),
        ...(record.error !== undefined ? { error: record.error } : {}),
        ...(record.cause !== undefined ? { cause: record.cause } : {}),
      };
    },

    async StopExecution(input) {
      const error = optionalString(input, 'error', 256);
      const cause = optionalString(input, 'cause', 32768);
      const record = findExecution(input);
      // Stopping an execution that has ended changes nothing.
      if (record.status === 'RUNNING') {
        Object.assign(record, { status: 'ABORTED', stopDate: Date.now() });
        if (error !== undefined) record.error = error;
        if (cause !== undefined) record.cause = cause;
        const running = runs.get(record.executionArn);
        if (running) {
          running.abort();
          cancel(running, new Error('the execution was stopped'));
        }
        await persist();
        emitStatusChange(record);
      }
      return { stopDate: seconds(record.stopDate!) };
    },

    async ListExecutions(input) {
      const machine = findMachine(input);
      const statusFilter = input.statusFilter;
      if (statusFilter !== undefined && !STATUSES.includes(statusFilter as string)) {
        throw new AwsServiceError('ValidationException', `statusFilter must be one of ${STATUSES.join(', ')}`);
      }
      const maxResults = input.maxResults ?? 0;
      if (!Number.isInteger(maxResults) || (maxResults as number) < 0 || (maxResults as number) > 1000) {
        throw new AwsServiceError('ValidationException', 'maxResults must be between 0 and 1000');
      }
      let list = [...executions.values()]
        .filter((record) => record.stateMachineArn === machine.arn && (statusFilter === undefined || record.status === statusFilter))
        .sort(newestFirst);
      const token = optionalString(input, 'nextToken', 3096);
      if (token) {
        const marker = decodeToken(token) as ExecutionRecord;
        list = list.filter((record) => newestFirst(record, marker) > 0);
      }
      const page = list.slice(0, (maxResults as number) || 100);
      const last = page.at(-1);
      return { executions: page.map(summary), ...(list.length > page.length && last ? { nextToken: encodeToken(last) } : {}) };
    },
  };

  return {
    operations,
    flush,
    async activate() {
      pool.replenish();
      const warming = Object.entries(options.keepWarm ?? {}).map(([name, count]) => {
        const module = functions?.get(name);
        return module ? pool.keepWarm(name, module, count) : undefined;
      });
      for (const record of interrupted.splice(0)) if (record.status === 'RUNNING' && !runs.has(record.executionArn)) run(record);
      await Promise.all(warming);
    },
    async stop() {
      if (!stopped) {
        stopped = true;
        for (const running of runs.values()) {
          running.abandoned = true;
          running.abort();
          cancel(running, new Error('the local Step Functions stopped'));
        }
        runs.clear();
        await pool.close();
      }
      await flush();
    },
  };
}
