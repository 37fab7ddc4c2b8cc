/**
 * A Lambda stand-in for the functions the service invokes itself (the sandbox function of
 * the terminal tool): the REST `Invoke` operation, synchronous (`RequestResponse`), so
 * the real LambdaClient works against it through `AWS_ENDPOINT_URL_LAMBDA`. Each
 * invocation runs in a local execution environment (`lambda-sandboxes.ts`), as the state
 * machine's tasks do, and is answered as Lambda answers: the result as the body, or a
 * function error with `X-Amz-Function-Error: Unhandled` and `{errorType, errorMessage}`.
 *
 * Its functions run with the environment of a function that sets no variable of its own:
 * a PATH, the language, and a temporary directory (Lambda's `/tmp`) of their own; none of
 * the service's configuration and credentials.
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from './account';
import { isolatedCommand } from './bwrap';
import { createSandboxPool, FunctionError, functionArn } from './lambda-sandboxes';

/** A function the endpoint serves. */
export interface LocalFunction {
  name: string;
  /** Absolute path of the handler module. */
  module: string;
  timeoutSeconds: number;
  /** Tenant isolation mode (`TenancyConfig.PER_TENANT`): every invocation names its tenant, and an environment serves one tenant only. */
  perTenant?: boolean;
  /** Environments kept initialized ahead of invocations (of a per-tenant function: not yet bound to a tenant); default 1. */
  keepWarm?: number;
}

export interface LambdaOptions {
  functions: readonly LocalFunction[];
  host?: string;
  /** Default: any free port. */
  port?: number;
  /** Where each execution environment gets its own temporary directory; default `<os tmpdir>/agent-sessions-lambda`. */
  tmpDir?: string;
  /** The bundled runner of the execution environments (see `SandboxPoolOptions.runner`); default the TypeScript one. */
  runner?: string;
  /**
   * Runs every execution environment in bubblewrap (`local/bwrap.ts`), these directories
   * hidden from it: its own `/tmp`, an unprivileged user, the system read-only.
   */
  isolation?: { hidden: readonly string[] };
  /**
   * A test setting: every invocation gets a new execution environment, ended after it, as
   * when Lambda has recycled or scaled out the last one (the terminal tool's workspace is
   * then restored from its snapshot at every command).
   */
  freshEnvironments?: boolean;
}

export interface LambdaEndpoint {
  endpoint: string;
  /** Resolves once the kept-warm environments are initialized. */
  warmed: Promise<void>;
  /** Stops taking requests and kills every execution environment. */
  stop(): Promise<void>;
}

// Lambda's limit on a synchronous invocation's request and response payloads.
const MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;
const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;
// Lambda's tenant id: 1 to 256 of these characters.
const TENANT_ID = /^[a-zA-Z0-9._:/=+\-@ ]{1,256}$/;
const FUNCTION_ARN = new RegExp(`^arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:function:([A-Za-z0-9_-]+)(?::\\$LATEST)?$`);

/** An error Lambda answers itself, before or instead of running the function. */
class ServiceError extends Error {
  constructor(
    readonly type: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_PAYLOAD_BYTES) chunks.push(chunk);
    });
    request.on('end', () => {
      if (size > MAX_PAYLOAD_BYTES) {
        reject(new ServiceError('RequestTooLargeException', 413, `Request must be smaller than ${MAX_PAYLOAD_BYTES} bytes for the InvokeFunction operation`));
      } else resolve(Buffer.concat(chunks));
    });
    request.on('error', reject);
  });
}

function send(response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (response.destroyed) return;
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-amzn-requestid': randomUUID(),
    ...headers,
  });
  response.end(body);
}

/** The function a path names: by name, `name:$LATEST` or its ARN. */
function functionNameOf(segment: string): string {
  let name: string;
  try {
    name = decodeURIComponent(segment);
  } catch {
    name = segment;
  }
  return FUNCTION_ARN.exec(name)?.[1] ?? name.replace(/:\$LATEST$/, '');
}

/** The invocation's tenant (`X-Amz-Tenant-Id`): required by a tenant-isolated function, refused by any other, as Lambda does. */
function tenantOf(request: IncomingMessage, fn: LocalFunction): string | undefined {
  const header = request.headers['x-amz-tenant-id'];
  const tenantId = Array.isArray(header) ? header[0] : header;
  if (tenantId === undefined) {
    if (fn.perTenant) throw new ServiceError('InvalidParameterValueException', 400, `Function ${fn.name} uses tenant isolation: the invocation must name a TenantId`);
    return undefined;
  }
  if (!fn.perTenant) throw new ServiceError('InvalidParameterValueException', 400, `Function ${fn.name} does not use tenant isolation: TenantId is not allowed`);
  if (!TENANT_ID.test(tenantId)) throw new ServiceError('InvalidParameterValueException', 400, 'TenantId must be 1 to 256 characters of letters, digits and ._:/=+-@ and space');
  return tenantId;
}

/** Starts the endpoint; resolves once it listens. */
export async function startLambda(options: LambdaOptions): Promise<LambdaEndpoint> {
  const functions = new Map(options.functions.map((fn) => [fn.name, fn]));
  const tmpDir = options.tmpDir ?? join(tmpdir(), 'agent-sessions-lambda');
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  const env = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' };
  const runner = options.runner ? { runner: options.runner } : {};
  const isolation = options.isolation;
  const pool = createSandboxPool(
    isolation
      ? {
          env,
          ...runner,
          // Each environment has a /tmp of its own inside bubblewrap; it sees only the files it starts from.
          wrap: (command, args) =>
            isolatedCommand(command, args, { hidden: isolation.hidden, exposed: [...args.filter((arg) => arg.startsWith('/')), ...[...functions.values()].map((fn) => fn.module)] }),
        }
      : { env, tmpRoot: tmpDir, ...runner },
  );

  async function invoke(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0]!;
    const match = INVOKE_PATH.exec(path);
    if (request.method !== 'POST' || !match) throw new ServiceError('UnknownOperationException', 404, `${request.method} ${path} is not available locally`);
    const name = functionNameOf(match[1]!);
    const fn = functions.get(name);
    if (!fn) throw new ServiceError('ResourceNotFoundException', 404, `Function not found: ${functionArn(name)}`);
    const invocationType = request.headers['x-amz-invocation-type'] ?? 'RequestResponse';
    if (invocationType !== 'RequestResponse') {
      throw new ServiceError('InvalidParameterValueException', 400, `InvocationType ${String(invocationType)} is not available locally`);
    }
    const body = (await readBody(request)).toString('utf8');
    let event: unknown;
    try {
      // As on Lambda, no payload is an empty object.
      event = body.trim() === '' ? {} : JSON.parse(body);
    } catch (error) {
      throw new ServiceError('InvalidRequestContentException', 400, `Could not parse request body into json: ${(error as Error).message}`);
    }

    const tenantId = tenantOf(request, fn);
    const sandbox = pool.acquire(fn.name, tenantId);
    try {
      const awsRequestId = randomUUID();
      const payload = await sandbox.invoke(
        { module: fn.module, event, functionName: fn.name, invokedFunctionArn: functionArn(fn.name), awsRequestId, ...(tenantId !== undefined ? { tenantId } : {}) },
        fn.timeoutSeconds * 1000,
      );
      if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
        const errorMessage = `Response payload size exceeded maximum allowed payload size (${MAX_PAYLOAD_BYTES} bytes).`;
        sendFunctionError(response, { errorType: 'Function.ResponseSizeTooLarge', errorMessage });
        return;
      }
      send(response, 200, payload, { 'x-amz-executed-version': '$LATEST' });
    } catch (error) {
      if (!(error instanceof FunctionError)) throw new ServiceError('ServiceException', 500, (error as Error).message);
      sendFunctionError(response, error.error);
    } finally {
      if (options.freshEnvironments) sandbox.kill(new Error('a fresh environment for every invocation'));
      else pool.release(sandbox);
    }
  }

  function sendFunctionError(response: ServerResponse, error: { errorType: string; errorMessage: string }): void {
    send(response, 200, JSON.stringify(error), { 'x-amz-executed-version': '$LATEST', 'x-amz-function-error': 'Unhandled' });
  }

  const server = createServer((request, response) => {
    invoke(request, response).catch((error: unknown) => {
      const known = error instanceof ServiceError ? error : new ServiceError('ServiceException', 500, 'internal error');
      if (!(error instanceof ServiceError)) console.error(JSON.stringify({ level: 'error', source: 'local-lambda', error: String(error) }));
      const type = known.status >= 500 ? 'Service' : 'User';
      send(response, known.status, JSON.stringify({ Type: type, message: known.message }), { 'x-amzn-errortype': known.type });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // The first invocation of each function finds its module imported already.
  pool.replenish();
  const warmed = Promise.all([...functions.values()].map((fn) => pool.keepWarm(fn.name, fn.module, fn.keepWarm ?? 1))).then(() => undefined);
  const { address, port } = server.address() as AddressInfo;

  let stopping: Promise<void> | undefined;
  return {
    endpoint: `http://${address}:${port}`,
    warmed,
    stop: () =>
      (stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await pool.close();
        await closed;
      })()),
  };
}
