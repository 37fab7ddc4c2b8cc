/**
 * Local Lambda execution environments ("sandboxes"), shared by the local Step Functions
 * (its `lambda:invoke` tasks) and the local Lambda endpoint: each is a child process
 * (`lambda-runner.ts`) serving one function, one invocation at a time, in its own process
 * group, so crashes, timeouts and kills end it as they end an environment on Lambda, with
 * the errors Lambda reports for them. A pool keeps them warm between invocations of the
 * same function and one spare ready with Node and tsx loaded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from './account';
import { spawnChild, typeScriptEntry, type ManagedChild } from './child-process';
import type { InitMessage, InvokeAnswer, InvokeMessage, LambdaError, RunnerNotice } from './lambda-runner';

const TYPESCRIPT_RUNNER = new URL('./lambda-runner.ts', import.meta.url);
// Lambda keeps an idle execution environment for minutes; so do we, within reason.
const IDLE_SANDBOX_MS = 5 * 60_000;
// Lambda gives a function's init (importing its module) 10 s, apart from its timeout.
const INIT_TIMEOUT_MS = 10_000;
// Environments bound to a tenant (one invocation's terminal commands) kept idle at most: each
// serves one tenant only, so a busy hour would otherwise keep one process per invocation.
const MAX_IDLE_TENANT_SANDBOXES = 16;
const SIGNAL_WORDS: Partial<Record<NodeJS.Signals, string>> = { SIGKILL: 'killed', SIGTERM: 'terminated', SIGSEGV: 'segmentation fault' };

/** The ARN of a local function. */
export const functionArn = (name: string) => `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:function:${name}`;

/**
 * An error of the function, shaped as Lambda reports it (`error`). Its `name` is the
 * errorType and its `message` the error as JSON: what the lambda:invoke integration shows
 * a Task state as Error and Cause.
 */
export class FunctionError extends Error {
  constructor(readonly error: LambdaError) {
    super(JSON.stringify(error));
    this.name = error.errorType;
  }
}

function functionError(error: LambdaError): Error {
  return new FunctionError(error);
}

export interface SandboxPoolOptions {
  /**
   * The runner's bundle (`local/bundles.ts`): sandboxes start on plain Node and run bundled
   * functions, as Lambda does. Without it they run the TypeScript runner through tsx, which
   * also runs TypeScript modules (the tests' fixtures).
   */
  runner?: string;
  /** The environment of every sandbox; default this process's, as it is at each spawn. */
  env?: NodeJS.ProcessEnv;
  /** Runs each sandbox through a wrapper (bubblewrap, `local/bwrap.ts`): the command and arguments to spawn instead. */
  wrap?: (command: string, args: string[]) => { command: string; args: string[] };
  /**
   * Gives every sandbox a temporary directory of its own below this one (its TMPDIR,
   * removed when it ends), as each Lambda execution environment has its own /tmp.
   */
  tmpRoot?: string;
  /** How long an idle environment beyond the kept-warm count lives; default 5 minutes, as Lambda keeps one. */
  idleMs?: number;
}

function runtimeExit(awsRequestId: string, code: number | null, signal: NodeJS.Signals | null): Error {
  const how = signal ? `signal: ${SIGNAL_WORDS[signal] ?? signal}` : code !== null ? `exit status ${code}` : 'it could not be reached';
  const errorMessage = `RequestId: ${awsRequestId} Error: Runtime exited with error: ${how}`;
  return functionError({ errorType: 'Runtime.ExitError', errorMessage });
}

/** One Lambda execution environment: a child process serving one function, one invocation at a time. */
export class Sandbox {
  readonly child: ManagedChild;
  private pending?: { awsRequestId: string; resolve(payload: string): void; reject(error: Error): void; started(): void };
  /** Resolves once the function's module is imported (init done), or once the process ended first. */
  private initialized?: Promise<void>;
  private onInitialized?: () => void;
  /** The process is gone. */
  private closed = false;
  /** It takes no more invocations: killed, or ending by itself after a fatal error. */
  private retired = false;
  /** Set at the first invocation: an execution environment serves one function. */
  functionName?: string;
  /** Set at the first invocation of a tenant-isolated function: the environment then serves that tenant only. */
  tenantId?: string;
  /** Where it waits between invocations: its function's idle list, or its tenant's. */
  get poolKey(): string {
    return this.tenantId === undefined ? this.functionName! : `${this.functionName}\0${this.tenantId}`;
  }

  /** Its function's module was imported once (init done). */
  ready = false;
  idleTimer?: NodeJS.Timeout;

  constructor(onEnd: (sandbox: Sandbox) => void, options: SandboxPoolOptions) {
    const { env, tmpRoot, runner, wrap } = options;
    const tmp = tmpRoot === undefined ? undefined : mkdtempSync(join(tmpRoot, 'env-'));
    const args = runner ? [runner] : typeScriptEntry(TYPESCRIPT_RUNNER);
    const spawned = wrap ? wrap(process.execPath, args) : { command: process.execPath, args };
    // Output goes where the cloud's goes, as the service's logs; 'ipc' carries invocations.
    this.child = spawnChild(spawned.command, spawned.args, {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      ...(env || tmp ? { env: { ...(env ?? process.env), ...(tmp ? { TMPDIR: tmp } : {}) } } : {}),
    });
    const child = this.child.process;
    // A warm sandbox must not keep the cloud's process alive; a busy one is awaited anyway.
    child.unref();
    child.channel?.unref();
    child.on('message', (answer: InvokeAnswer | RunnerNotice) => this.settle(answer));
    const end = (code: number | null, signal: NodeJS.Signals | null) => {
      if (this.pending) this.fail(runtimeExit(this.pending.awsRequestId, code, signal));
      // Whatever it started goes with it, as a Lambda environment is torn down whole.
      this.signalGroup();
      this.closed = true;
      // An init cut short is over too: whoever awaits it sees `ready` false.
      this.onInitialized?.();
      if (tmp) rmSync(tmp, { recursive: true, force: true });
      onEnd(this);
    };
    // 'close', not 'exit': an answer sent just before exiting is delivered before 'close'.
    child.once('close', end);
    void this.child.exited.then((exit) => exit.error && end(null, null));
  }

  /** Alive and not retired: it may take an invocation. */
  get usable(): boolean {
    return !this.closed && !this.retired;
  }

  /**
   * Imports the function's module ahead of its first invocation (init), so that invocation
   * starts warm; resolves when done, or when the process ended first (then `ready` is
   * false). A failing init ends the process (see the runner).
   */
  initialize(module: string, functionName: string): Promise<void> {
    this.functionName = functionName;
    this.initialized ??= new Promise<void>((resolve) => {
      this.onInitialized = resolve;
      this.child.process.send({ init: { module, functionName } } satisfies InitMessage, (error) => {
        if (error) this.kill(new Error('the sandbox could not be reached'));
      });
    });
    return this.initialized;
  }

  /**
   * Runs one invocation; resolves with the result as JSON text, rejects with a `FunctionError`
   * or the reason it was killed. `timeoutMs` counts from the handler call, as on Lambda; init
   * (importing the module) has its own 10 s.
   */
  invoke(message: Omit<InvokeMessage, 'timeoutMs'>, timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const timedOut = (errorMessage: string) => () => this.kill(functionError({ errorType: 'Sandbox.Timedout', errorMessage }));
      let timer = setTimeout(timedOut(`RequestId: ${message.awsRequestId} Error: Init timed out after ${(INIT_TIMEOUT_MS / 1000).toFixed(2)} seconds`), INIT_TIMEOUT_MS);
      const started = () => {
        clearTimeout(timer);
        timer = setTimeout(timedOut(`RequestId: ${message.awsRequestId} Error: Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`), timeoutMs);
      };
      const settled = <T>(next: (value: T) => void) => (value: T) => {
        clearTimeout(timer);
        this.pending = undefined;
        next(value);
      };
      this.pending = { awsRequestId: message.awsRequestId, resolve: settled(resolve), reject: settled(reject), started };
      this.child.process.send({ ...message, timeoutMs } satisfies InvokeMessage, (error) => {
        if (error) this.kill(runtimeExit(message.awsRequestId, null, null));
      });
    });
  }

  /** SIGKILL to its whole process group (tools it started go too); the invocation fails with `reason`. */
  kill(reason: Error): void {
    this.fail(reason);
    this.retired = true;
    this.signalGroup();
  }

  private signalGroup(): void {
    const pid = this.child.process.pid;
    if (this.closed || pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }

  private settle(answer: InvokeAnswer | RunnerNotice): void {
    if ('initialized' in answer) {
      this.ready = true;
      this.onInitialized?.();
      return;
    }
    if (this.pending?.awsRequestId !== answer.awsRequestId) return;
    if ('started' in answer) {
      this.ready = true;
      this.pending.started();
      return;
    }
    if ('payload' in answer) {
      this.pending.resolve(answer.payload);
      return;
    }
    // The runner exits after such an answer: no invocation may be sent to it meanwhile.
    if (answer.final) this.retired = true;
    this.pending.reject(functionError(answer.error));
  }

  private fail(error: Error): void {
    this.pending?.reject(error);
  }
}

/**
 * Warm sandboxes by function, the spare, and every sandbox alive, to kill them all on stop.
 * A function may be kept warm (`keepWarm`): that many of its environments live with its
 * module imported, busy or idle, as provisioned concurrency keeps environments initialized
 * on Lambda. One that ends is replaced in the background, one at a time, so a burst of
 * failures never starts a crowd of imports beside the environments still serving. An idle
 * environment beyond the kept-warm count ends after 5 minutes.
 */
export function createSandboxPool(options: SandboxPoolOptions = {}) {
  const idle = new Map<string, Sandbox[]>();
  const warm = new Map<string, { module: string; count: number; replacing?: Sandbox }>();
  const all = new Set<Sandbox>();
  let spare: Sandbox | undefined;
  let closed = false;
  const idleMs = options.idleMs ?? IDLE_SANDBOX_MS;
  // Idle environments bound to a tenant, oldest first.
  const idleTenants: Sandbox[] = [];

  function forget(sandbox: Sandbox): void {
    all.delete(sandbox);
    clearTimeout(sandbox.idleTimer);
    if (spare === sandbox) spare = undefined;
    const list = sandbox.functionName === undefined ? undefined : idle.get(sandbox.poolKey);
    if (list?.includes(sandbox)) list.splice(list.indexOf(sandbox), 1);
    if (idleTenants.includes(sandbox)) idleTenants.splice(idleTenants.indexOf(sandbox), 1);
    // Replaced only if it had got going: a module that cannot even be imported is not retried forever.
    if (!closed && sandbox.functionName && sandbox.ready) topUp(sandbox.functionName);
  }

  function spawn(): Sandbox {
    const sandbox = new Sandbox(forget, options);
    all.add(sandbox);
    return sandbox;
  }

  /** Starts a spare unless one is waiting: spawned before it is needed, in the environment as it is now. */
  function replenish(): void {
    if (!closed && !spare) spare = spawn();
  }

  // The function's environments that may still serve any invocation, busy or idle (not
  // bound to a tenant): what its kept-warm count counts.
  const liveCount = (functionName: string) =>
    [...all].filter((sandbox) => sandbox.functionName === functionName && sandbox.tenantId === undefined && sandbox.usable).length;

  function keepIdle(sandbox: Sandbox): void {
    const functionName = sandbox.functionName!;
    const expire = () => {
      // The kept-warm ones stay; only those beyond the count, or bound to a tenant, end.
      const kept = sandbox.tenantId === undefined && liveCount(functionName) <= (warm.get(functionName)?.count ?? 0);
      if (kept) sandbox.idleTimer = setTimeout(expire, idleMs).unref();
      else sandbox.kill(new Error('idle'));
    };
    sandbox.idleTimer = setTimeout(expire, idleMs).unref();
    const list = idle.get(sandbox.poolKey) ?? [];
    list.push(sandbox);
    idle.set(sandbox.poolKey, list);
    if (sandbox.tenantId !== undefined) {
      // Each tenant's environments serve it alone: past the cap, the one idle longest ends.
      idleTenants.push(sandbox);
      if (idleTenants.length > MAX_IDLE_TENANT_SANDBOXES) idleTenants.shift()!.kill(new Error('idle'));
    }
  }

  /** The idle environment of `key` used last, taken off its list. */
  function takeIdle(key: string): Sandbox | undefined {
    const list = idle.get(key) ?? [];
    while (list.length) {
      const candidate = list.pop()!;
      clearTimeout(candidate.idleTimer);
      if (idleTenants.includes(candidate)) idleTenants.splice(idleTenants.indexOf(candidate), 1);
      // One killed for idling stays listed until its process is gone.
      if (candidate.usable) return candidate;
    }
    return undefined;
  }

  /** An environment of the function, initializing and listed idle: taken before its init is done, it runs the invocation right after (IPC keeps the order). */
  function warmOne(functionName: string, module: string): Sandbox {
    const sandbox = spawn();
    sandbox.functionName = functionName;
    keepIdle(sandbox);
    void sandbox.initialize(module, functionName);
    return sandbox;
  }

  /** Replaces a kept-warm function's environments that ended, one at a time, until it has its count. */
  function topUp(functionName: string): void {
    const target = warm.get(functionName);
    if (!target || closed || (target.replacing?.usable && !target.replacing.ready)) return;
    if (liveCount(functionName) >= target.count) return;
    const sandbox = warmOne(functionName, target.module);
    target.replacing = sandbox;
    // A module that cannot even be imported is not retried forever.
    void sandbox.initialize(target.module, functionName).then(() => sandbox.ready && topUp(functionName));
  }

  return {
    replenish,

    /**
     * Keeps `count` environments of the function initialized and waiting, from now on;
     * resolves once the first ones are initialized (all started at once: nothing runs yet).
     */
    async keepWarm(functionName: string, module: string, count: number): Promise<void> {
      warm.set(functionName, { module, count });
      const started = Array.from({ length: Math.max(0, count - liveCount(functionName)) }, () => warmOne(functionName, module));
      await Promise.all(started.map((sandbox) => sandbox.initialize(module, functionName)));
    },

    /**
     * A warm sandbox of the function, else the spare, else a new one. With a tenant (a
     * tenant-isolated function), one of that tenant's, else one that has served no tenant
     * yet, which is then the tenant's for good, as Lambda gives a new tenant a new environment.
     */
    acquire(functionName: string, tenantId?: string): Sandbox {
      let sandbox = tenantId === undefined ? takeIdle(functionName) : (takeIdle(`${functionName}\0${tenantId}`) ?? takeIdle(functionName));
      if (!sandbox) {
        sandbox = spare?.usable ? spare : spawn();
        spare = undefined;
        sandbox.functionName = functionName;
        replenish();
      }
      if (tenantId !== undefined && sandbox.tenantId === undefined) {
        sandbox.tenantId = tenantId;
        // It no longer counts as the function's warm environment.
        topUp(functionName);
      }
      return sandbox;
    },

    /** Keeps a sandbox warm after an invocation, unless it ended or the pool is closed. */
    release(sandbox: Sandbox): void {
      if (!sandbox.usable || closed) return;
      keepIdle(sandbox);
    },

    /** Kills every sandbox and waits until they are gone. */
    async close(): Promise<void> {
      closed = true;
      const sandboxes = [...all];
      for (const sandbox of sandboxes) {
        // Referenced again, so the process lives until they are gone even when nothing else
        // keeps it alive (an idle sandbox is unreferenced).
        sandbox.child.process.ref();
        sandbox.kill(new Error('the local cloud stopped'));
      }
      await Promise.all(sandboxes.map((sandbox) => sandbox.child.exited));
    },
  };
}
