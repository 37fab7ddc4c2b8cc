/**
 * The local cloud: the API Gateway stand-in in this process, DynamoDB Local, s3rver and
 * the AWS JSON endpoint (Secrets Manager, Step Functions) beside it, and the local
 * sign-in. It sets the service's environment in `process.env` before any handler module
 * is imported, so the service code runs unchanged, its SDK clients pointed at the
 * emulators. The invocation state machine's task functions run in child processes that
 * inherit that environment.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SANDBOX_FUNCTION_TIMEOUT_SECONDS } from '#contracts/sandbox';
import { ENV } from '#kit/env';
import { tableSchema } from '#data/table';
import { routes as serviceRoutes } from '#functions/routes';
import { deliveryStateMachine, invocationStateMachine } from '#functions/workflow/definition';
import { createConsoleSite } from '../console/site';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './account';
import { AwsServiceError, startAwsJsonServer, type AwsJsonService } from './aws-json';
import { ensureTable, localDynamoDbClient, startDynamoDb, warmUpDynamoDb } from './dynamodb';
import { LocalCloudError } from './errors';
import { startGateway } from './gateway';
import { bundlesOf, LOCAL_FUNCTIONS, RUNNER } from './bundles';
import { bwrapUsable } from './bwrap';
import { listeningSockets } from './listening-sockets';
import { startLambda, type LambdaEndpoint, type LocalFunction } from './lambda';
import { awsJsonService, startCountingProxy, type RequestCounts } from './request-counter';
import { startS3 } from './s3';
import { createSecretsManager } from './secrets-manager';
import { createSignIn, LOCAL_AUDIENCE } from './sign-in';
import { createStepFunctions, stateMachineArn, type StepFunctions } from './step-functions';

export interface LocalCloudOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 3000; 0 takes any free port. */
  port?: number;
  /** Where state persists (default `.data`); null keeps everything in memory. */
  dataDir?: string | null;
  /** Overrides of the service environment (applied last). */
  env?: Record<string, string>;
  /**
   * For the benchmarks: counts every request the service makes to each emulator here, by
   * service (`dynamodb`, `s3`, `stepfunctions`, `secretsmanager`, `lambda`), through proxies.
   */
  countRequests?: RequestCounts;
  /** For tests: every command of the terminal tool runs in a new execution environment, so its workspace is restored from the snapshot each time. */
  freshSandboxEnvironments?: boolean;
}

export interface LocalCloud {
  /** e.g. `http://127.0.0.1:3000`, no trailing slash. */
  baseUrl: string;
  /** The service environment, as set in `process.env`. */
  env: Record<string, string>;
  /** Absolute data directory, or null in memory mode. */
  dataDir: string | null;
  /** Where the emulators themselves answer (the service may be pointed at counting proxies in front of them). */
  emulators: { dynamodb: string; s3: string };
  /** One line each: what runs with less than it should here (e.g. no bubblewrap), for `npm start` to print. */
  warnings: string[];
  /** Stops everything and flushes state; safe to call twice. */
  stop(): Promise<void>;
}

const INVOCATION_STATE_MACHINE = 'agent-sessions-invocation';
const DELIVERY_STATE_MACHINE = 'agent-sessions-delivery';

/** The Secrets Manager secret holding the key list cursors are signed with (outside the organizations' prefix). */
const CURSOR_KEY_SECRET = 'agent-sessions-cursor-key';

/** Creates the cursor key once; a persisted one is kept, so cursors survive a restart. */
async function ensureCursorKey(secretsManager: AwsJsonService): Promise<void> {
  try {
    await secretsManager.operations.CreateSecret!({ Name: CURSOR_KEY_SECRET, SecretString: randomBytes(32).toString('base64url') });
  } catch (error) {
    if (!(error instanceof AwsServiceError && error.name === 'ResourceExistsException')) throw error;
  }
}

// Variables that could point an SDK client at a real account or away from the emulators.
const REMOVED_VARIABLES = ['AWS_PROFILE', 'AWS_DEFAULT_PROFILE', 'AWS_SESSION_TOKEN', 'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS'];

function baseUrlFor(host: string, port: number): string {
  // A wildcard address is not somewhere to send requests (tokens carry this URL as issuer).
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/**
 * `mkdir -p`, by hand: Node 20's `mkdir(..., { recursive: true })` spins forever on a path
 * it can never create, such as one under /proc.
 */
async function makeDirectories(path: string): Promise<void> {
  try {
    await mkdir(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      if ((await stat(path)).isDirectory()) return;
      throw Object.assign(new Error(`${path} is a file`), { code: 'ENOTDIR' });
    }
    if (code !== 'ENOENT' || dirname(path) === path) throw error;
    await makeDirectories(dirname(path));
    await mkdir(path);
  }
}

/** Creates the data directory and takes its lock, so two instances never share one. */
async function claimDataDir(dataDir: string): Promise<() => Promise<void>> {
  const lockFile = join(dataDir, '.lock');
  try {
    await makeDirectories(dataDir);
    for (;;) {
      try {
        const handle = await open(lockFile, 'wx', 0o600);
        await handle.writeFile(String(process.pid));
        await handle.close();
        return () => rm(lockFile, { force: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const pid = Number(await readFile(lockFile, 'utf8').catch(() => ''));
        if (pid > 0 && pid !== process.pid && isAlive(pid)) {
          throw new LocalCloudError(`data dir ${dataDir} is in use by another instance (pid ${pid}); set DATA_DIR to another`);
        }
        // Left behind by an instance that did not stop cleanly.
        await rm(lockFile, { force: true });
      }
    }
  } catch (error) {
    if (error instanceof LocalCloudError) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new LocalCloudError(`data dir ${dataDir} is not writable (${code}); set DATA_DIR to another`);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The service variables that do not depend on where the emulators listen. */
function staticEnv(issuer: string, overrides: Record<string, string>): Record<string, string> {
  return {
    AWS_REGION: LOCAL_REGION,
    AWS_DEFAULT_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    // s3rver stores aws-chunked uploads with their framing, so no checksums unless required.
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
    // Node 20.19 is supported (CONTRACT.md); the SDK's notice about its future would print at every start.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    [ENV.tableName]: 'agent-sessions',
    [ENV.payloadBucket]: 'agent-sessions-payloads',
    [ENV.secretPrefix]: 'agent-sessions/',
    [ENV.cursorKeySecretId]: CURSOR_KEY_SECRET,
    [ENV.authIssuer]: issuer,
    [ENV.authAudience]: LOCAL_AUDIENCE,
    [ENV.founderEmails]: process.env[ENV.founderEmails] ?? 'dev@localhost',
    [ENV.invocationQuota]: process.env[ENV.invocationQuota] ?? '1000',
    [ENV.stateMachineArn]: stateMachineArn(INVOCATION_STATE_MACHINE),
    [ENV.deliveryStateMachineArn]: stateMachineArn(DELIVERY_STATE_MACHINE),
    // Webhook and export receivers on 127.0.0.1 are how this cloud is tried and tested.
    [ENV.loopbackUrls]: 'true',
    [ENV.sandboxFunctionName]: 'agent-sessions-sandbox',
    [ENV.attemptTimeoutSeconds]: process.env[ENV.attemptTimeoutSeconds] ?? '900',
    [ENV.maxAttempts]: process.env[ENV.maxAttempts] ?? '3',
    ...(process.env[ENV.modelCatalogue] ? { [ENV.modelCatalogue]: process.env[ENV.modelCatalogue] } : {}),
    ...overrides,
  };
}

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host.startsWith('127.') || host === '::1';
}

/** A whole-number setting within its allowed range; the local cloud refuses to start otherwise. */
function integerSetting(env: Record<string, string>, name: string, min: number, max: number): number {
  const value = Number(env[name]);
  if (!/^\d+$/.test(env[name] ?? '') || value < min || value > max) {
    throw new LocalCloudError(`${name} must be a whole number from ${min} to ${max} (got ${env[name]})`);
  }
  return value;
}

/** The invocation state machine, its tasks dispatched to the workflow functions' bundles. */
function invocationMachine(env: Record<string, string>) {
  const attemptTimeoutSeconds = integerSetting(env, ENV.attemptTimeoutSeconds, 1, 900);
  const maxAttempts = integerSetting(env, ENV.maxAttempts, 1, 10);
  const { runSteps, settleAttempt, recordOutcome } = LOCAL_FUNCTIONS;
  const definition = invocationStateMachine(
    { runSteps: runSteps.name, settleAttempt: settleAttempt.name, recordOutcome: recordOutcome.name },
    { attemptTimeoutSeconds, maxAttempts },
  );
  return { name: INVOCATION_STATE_MACHINE, definition };
}

/** The delivery state machine, its task dispatched to the deliver function's bundle. */
function deliveryMachine() {
  return { name: DELIVERY_STATE_MACHINE, definition: deliveryStateMachine({ deliver: LOCAL_FUNCTIONS.deliver.name }) };
}

// Sessions that start side by side and must each find their environments warm (CONTRACT.md:
// eight sessions run in about the time of one, at every allowed ATTEMPT_TIMEOUT_SECONDS).
const SIDE_BY_SIDE_SESSIONS = 8;

// Environments kept initialized per task function: every run steps, so sessions starting
// side by side find their first task warm; the failure path may start cold. Each is a Node
// process of about 95 MiB (760 MiB for the eight).
const WARM_TASKS = { [LOCAL_FUNCTIONS.runSteps.name]: SIDE_BY_SIDE_SESSIONS };

/** The functions the service invokes itself (through the local Lambda endpoint): the terminal tool's sandbox, when it is on. */
function invokedFunctions(env: Record<string, string>, bundles: ReadonlyMap<string, string>): LocalFunction[] {
  const name = env[ENV.sandboxFunctionName];
  if (!name) return [];
  const module = bundles.get(LOCAL_FUNCTIONS.sandbox.name)!;
  // Tenant isolation, as CDK deploys it (lib/sandbox.ts): each invocation's commands in
  // environments of their own, so every new invocation's first command needs one: as many
  // wait initialized as sessions may start side by side (about 45 MiB each).
  return [{ name, module, timeoutSeconds: SANDBOX_FUNCTION_TIMEOUT_SECONDS, perTenant: true, keepWarm: SIDE_BY_SIDE_SESSIONS }];
}

const PROJECT_ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** What terminal commands must not see: the checkout, the data, and the developer's home (unless Node itself lives there). */
function hiddenFromCommands(dataDir: string | null): string[] {
  const home = homedir();
  const candidates = [PROJECT_ROOT, ...(dataDir ? [dataDir] : []), ...(home && home !== '/' ? [home] : [])];
  return candidates.filter((dir) => !process.execPath.startsWith(`${dir}/`));
}

function valueOf<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}

function applyEnv(env: Record<string, string>): void {
  for (const name of REMOVED_VARIABLES) delete process.env[name];
  Object.assign(process.env, env);
}

/** Starts the local cloud and resolves once every part answers. */
export async function startLocalCloud(options: LocalCloudOptions = {}): Promise<LocalCloud> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 3000;
  const dataDir = options.dataDir === null ? null : resolve(options.dataDir ?? '.data');
  const cleanups: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    // Reverse start order: the gateway (last started) stops taking requests first.
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };

  let release!: () => void;
  let abandon!: (reason: Error) => void;
  const ready = new Promise<void>((resolveReady, rejectReady) => {
    release = resolveReady;
    abandon = rejectReady;
  });
  // Nobody may be waiting on it when start fails.
  ready.catch(() => undefined);

  try {
    if (dataDir) cleanups.push(await claimDataDir(dataDir));
    let baseUrl = '';
    const signIn = createSignIn({
      issuer: () => `${baseUrl}/local`,
      keyFile: dataDir ? join(dataDir, 'signing-key.json') : null,
    });
    // The web console under /console/, built (or read from the cache) while the cloud starts.
    const consoleSite = createConsoleSite({ apiUrl: () => baseUrl });
    // Listen before starting the emulators: a taken port fails in milliseconds, not after
    // two seconds of JVM start-up. Requests wait for `ready`.
    const gateway = await startGateway({ host, port, routes: [...serviceRoutes, ...signIn.routes, ...consoleSite.routes], ready });
    baseUrl = baseUrlFor(host, gateway.address.port);
    const env = staticEnv(`${baseUrl}/local`, options.env ?? {});
    applyEnv(env);
    const warnings: string[] = [];
    // Terminal commands run only inside bubblewrap; without it the tool is off and says why.
    const bwrap = bwrapUsable();
    if (!bwrap.usable) {
      delete env[ENV.sandboxFunctionName];
      delete process.env[ENV.sandboxFunctionName];
      warnings.push(`the terminal tool is off: ${bwrap.reason} (apt-get install -y bubblewrap)`);
      warnings.push(`DynamoDB Local is reachable from the network (it listens on every interface; ${bwrap.reason}): anyone who can reach this machine can read and write its tables`);
    }
    const stateMachines = [invocationMachine(env), deliveryMachine()];
    // The functions' bundles, as CDK deploys them: from the cache, or built while the emulators start.
    const bundles = bundlesOf([...Object.values(LOCAL_FUNCTIONS), RUNNER]);
    bundles.catch(() => undefined);
    // Stopped after the emulators, and so after the task functions that invoke it.
    let lambda: LambdaEndpoint | undefined;
    cleanups.push(async () => {
      await lambda?.stop();
    });
    const lambdaStarted = bundles.then(async (built) => {
      lambda = await startLambda({
        functions: invokedFunctions(env, built),
        runner: built.get(RUNNER.name)!,
        isolation: { hidden: hiddenFromCommands(dataDir) },
        ...(options.freshSandboxEnvironments ? { freshEnvironments: true } : {}),
      });
      return lambda;
    });

    let stepFunctions: StepFunctions | undefined;
    const awsJsonServices = Promise.all([
      createSecretsManager({ file: dataDir ? join(dataDir, 'secrets.json') : null }).then(async (created) => {
        await ensureCursorKey(created);
        return created;
      }),
      bundles.then((built) =>
        createStepFunctions({
          file: dataDir ? join(dataDir, 'step-functions.json') : null,
          stateMachines,
          functions: built,
          runner: built.get(RUNNER.name)!,
          keepWarm: WARM_TASKS,
          // As the EventBridge rule CDK deploys: the invocation executions' status changes only.
          eventTarget: { functionName: LOCAL_FUNCTIONS.settleExecution.name, stateMachine: INVOCATION_STATE_MACHINE },
        }).then((created) => (stepFunctions = created)),
      ),
    ]);

    const [dynamodbResult, s3Result, awsJsonResult, signInResult, lambdaResult] = await Promise.allSettled([
      startDynamoDb({ dataDir, contain: bwrap.usable }).then(async (started) => {
        const client = localDynamoDbClient(started.endpoint);
        try {
          await ensureTable(client, env[ENV.tableName]!, tableSchema);
          return started;
        } catch (error) {
          await started.stop();
          throw error;
        } finally {
          client.destroy();
        }
      }),
      startS3({ dataDir, bucket: env[ENV.payloadBucket]! }),
      awsJsonServices.then(([secretsmanager, AWSStepFunctions]) => startAwsJsonServer({ secretsmanager, AWSStepFunctions })),
      signIn.loaded,
      lambdaStarted,
    ]);
    cleanups.push(async () => {
      await Promise.all(
        [dynamodbResult, s3Result, awsJsonResult].map((result) => (result.status === 'fulfilled' ? result.value.stop() : undefined)),
      );
    });
    // Task functions are stopped before the emulators they use, so none of them sees an
    // emulator vanish and records a failure: their executions resume at the next start.
    cleanups.push(async () => {
      await stepFunctions?.stop();
    });
    cleanups.push(gateway.stop);
    const dynamodb = valueOf(dynamodbResult);
    const s3 = valueOf(s3Result);
    const awsJson = valueOf(awsJsonResult);
    valueOf(signInResult);
    valueOf(lambdaResult);

    const endpoints = { dynamodb: dynamodb.endpoint, s3: s3.endpoint, awsJson: awsJson.endpoint, lambda: lambda!.endpoint };
    const counts = options.countRequests;
    if (counts) {
      // The benchmarks' view: every request the service makes, through a counting proxy.
      const proxied = await Promise.all([
        startCountingProxy(endpoints.dynamodb, counts, () => 'dynamodb'),
        startCountingProxy(endpoints.s3, counts, () => 's3'),
        startCountingProxy(endpoints.awsJson, counts, awsJsonService),
        startCountingProxy(endpoints.lambda, counts, () => 'lambda'),
      ]);
      cleanups.push(async () => {
        await Promise.all(proxied.map((proxy) => proxy.stop()));
      });
      [endpoints.dynamodb, endpoints.s3, endpoints.awsJson, endpoints.lambda] = proxied.map((proxy) => proxy.endpoint) as [string, string, string, string];
    }
    Object.assign(
      env,
      {
        AWS_ENDPOINT_URL: endpoints.awsJson,
        AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
        AWS_ENDPOINT_URL_S3: endpoints.s3,
        AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoints.awsJson,
        AWS_ENDPOINT_URL_SFN: endpoints.awsJson,
        AWS_ENDPOINT_URL_LAMBDA: endpoints.lambda,
      },
      options.env,
    );
    applyEnv(env);
    // Nothing of the cloud listens beyond loopback, but where the developer asked (HOST) or
    // was warned (DynamoDB Local without containment).
    const allowed = new Set([...(isLoopbackHost(host) ? [] : [gateway.address.port]), ...(bwrap.usable ? [] : [Number(new URL(dynamodb.endpoint).port)])]);
    const exposed = listeningSockets().filter((socket) => !socket.loopbackOnly && !allowed.has(socket.port));
    if (exposed.length) {
      const [first] = exposed;
      throw new LocalCloudError(`${first!.command} (pid ${first!.pid}) listens on ${first!.address}:${first!.port}, beyond loopback; refusing to start`);
    }
    // Only now: interrupted executions' tasks need the whole cloud (start-up does not wait
    // for them). Ready means warm: the handlers loaded, the kept-warm environments (RunSteps'
    // and the terminal sandbox's) initialized and DynamoDB Local's JVM past its first
    // requests, so the first runs after start are about as quick as later ones.
    const [, , , , consoleFailure] = await Promise.all([
      gateway.preload(),
      stepFunctions!.activate(),
      lambda!.warmed,
      warmUpDynamoDb(dynamodb.endpoint, tableSchema),
      consoleSite.loaded,
    ]);
    // The API serves without the console; /console/ answers why not.
    if (consoleFailure) warnings.push(consoleFailure);
    release();

    let stopping: Promise<void> | undefined;
    return { baseUrl, env, dataDir, emulators: { dynamodb: dynamodb.endpoint, s3: s3.endpoint }, warnings, stop: () => (stopping ??= stopAll()) };
  } catch (error) {
    abandon(error as Error);
    await stopAll();
    throw error;
  }
}
