/**
 * One local endpoint for the AWS services that speak the AWS JSON protocol (1.0 and 1.1:
 * a POST whose `X-Amz-Target: <prefix>.<Operation>` header names the operation). Each
 * service is a map of operations registered under its target prefix, e.g.
 * `secretsmanager` or `AWSStepFunctions`, so the real SDK clients work against it.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One operation: the parsed JSON input in, the JSON output out; throws `AwsServiceError`. */
export type AwsOperation = (input: Record<string, unknown>) => unknown;

export interface AwsJsonService {
  operations: Record<string, AwsOperation>;
  /** Called on stop, after the last request, to write out state. */
  flush?(): Promise<void>;
}

/** An error the SDK turns into the exception class of the same name. */
export class AwsServiceError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly statusCode = 400,
  ) {
    super(message);
    this.name = type;
  }
}

export interface AwsJsonServer {
  endpoint: string;
  stop(): Promise<void>;
}

export interface AwsJsonServerOptions {
  host?: string;
  port?: number;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function send(response: ServerResponse, contentType: string, status: number, body: unknown, errorType?: string): void {
  const text = JSON.stringify(body ?? {});
  response.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
    ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
  });
  response.end(text);
}

async function dispatch(services: Record<string, AwsJsonService>, request: IncomingMessage): Promise<unknown> {
  const target = String(request.headers['x-amz-target'] ?? '');
  const dot = target.indexOf('.');
  const service = dot > 0 && Object.hasOwn(services, target.slice(0, dot)) ? services[target.slice(0, dot)] : undefined;
  const name = target.slice(dot + 1);
  const operation = service && Object.hasOwn(service.operations, name) ? service.operations[name] : undefined;
  if (request.method !== 'POST' || !operation) {
    throw new AwsServiceError('UnknownOperationException', `operation ${target || '(no X-Amz-Target)'} is not available locally`);
  }
  const raw = await readBody(request);
  let input: unknown;
  try {
    input = raw.trim() ? JSON.parse(raw) : {};
  } catch {
    throw new AwsServiceError('SerializationException', 'request body is not valid JSON');
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new AwsServiceError('SerializationException', 'request body must be a JSON object');
  }
  return operation(input as Record<string, unknown>);
}

/** Starts the endpoint on `host:port` (default 127.0.0.1 and a free port). */
export function startAwsJsonServer(
  services: Record<string, AwsJsonService>,
  options: AwsJsonServerOptions = {},
): Promise<AwsJsonServer> {
  const server = createServer((request, response) => {
    // Answer in the protocol version the client spoke (1.1 for Secrets Manager, 1.0 for Step Functions).
    const requested = request.headers['content-type'] ?? '';
    const contentType = requested.startsWith('application/x-amz-json-') ? requested : 'application/x-amz-json-1.1';
    dispatch(services, request).then(
      (output) => send(response, contentType, 200, output),
      (error: unknown) => {
        if (error instanceof AwsServiceError) {
          send(response, contentType, error.statusCode, { __type: error.type, message: error.message }, error.type);
          return;
        }
        // Log the operation and the fault only: inputs can hold secret values.
        console.error(
          JSON.stringify({ level: 'error', source: 'local-aws-json', target: request.headers['x-amz-target'], error: String(error) }),
        );
        send(response, contentType, 500, { __type: 'InternalFailure', message: 'internal error' }, 'InternalFailure');
      },
    );
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      const { address, port } = server.address() as AddressInfo;
      resolve({
        endpoint: `http://${address}:${port}`,
        async stop() {
          await new Promise<void>((done) => {
            server.close(() => done());
            // Let a request in flight finish, but not hold the stop up for long.
            setTimeout(() => server.closeAllConnections(), 1000).unref();
          });
          await Promise.all(Object.values(services).map((service) => service.flush?.()));
        },
      });
    });
  });
}
