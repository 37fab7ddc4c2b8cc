/**
 * The API Gateway stand-in: an HTTP server that matches requests against the route table,
 * turns each into the HTTP API payload format 2.0 event API Gateway would send, calls the
 * route's handler module with a Lambda-like context, and writes the structured result
 * back, with API Gateway's own answers for what never reaches a function (404, 413, 500).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from './account';
import { LocalCloudError } from './errors';

/** A Lambda handler for HTTP API events, as every module under `functions/handlers/` exports. */
export type HttpHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<unknown>;

export interface GatewayRoute {
  method: string;
  /** API Gateway path template: `/tokens/{id}`, or `{name+}` for the rest of the path. */
  path: string;
  /** A module name under the handler directory, or the handler itself (local-only routes). */
  handler: string | HttpHandler;
  /** The function's timeout, which `getRemainingTimeInMillis` counts down from. */
  timeoutSeconds?: number;
}

export interface GatewayOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  routes: readonly GatewayRoute[];
  /** Where handler modules live; default `functions/handlers/`. */
  handlerDir?: URL;
  /** Requests wait for this before reaching a handler, so none runs before the cloud is up. */
  ready?: Promise<unknown>;
}

export interface Gateway {
  /** The address and port actually bound. */
  address: AddressInfo;
  /**
   * Loads every route's handler module now, as Lambda's init would before the first
   * request; resolves once they are loaded (a module that fails is loaded again at its
   * first request, which then answers the failure).
   */
  preload(): Promise<void>;
  stop(): Promise<void>;
}

/** API Gateway's payload limit; it answers 413 above it without calling the function. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;
const DEFAULT_TIMEOUT_SECONDS = 30;
const DEFAULT_HANDLER_DIR = new URL('../functions/handlers/', import.meta.url);
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

type Segment = { kind: 0; literal: string } | { kind: 1; name: string } | { kind: 2; name: string };

interface CompiledRoute {
  route: GatewayRoute;
  routeKey: string;
  segments: Segment[];
}

function compile(route: GatewayRoute): CompiledRoute {
  const segments = route.path
    .split('/')
    .slice(1)
    .map((part): Segment => {
      const variable = /^\{([^}]+?)(\+?)\}$/.exec(part);
      if (!variable) return { kind: 0, literal: part };
      return variable[2] ? { kind: 2, name: variable[1]! } : { kind: 1, name: variable[1]! };
    });
  return { route, routeKey: `${route.method} ${route.path}`, segments };
}

/** API Gateway prefers the most specific route: literal segments over variables, left to right. */
function bySpecificity(a: CompiledRoute, b: CompiledRoute): number {
  for (let i = 0; i < Math.max(a.segments.length, b.segments.length); i++) {
    const difference = (a.segments[i]?.kind ?? -1) - (b.segments[i]?.kind ?? -1);
    if (difference !== 0) return difference;
  }
  return 0;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function match(route: CompiledRoute, parts: string[]): Record<string, string> | undefined {
  const parameters: Record<string, string> = {};
  for (let i = 0; i < route.segments.length; i++) {
    const segment = route.segments[i]!;
    const part = parts[i];
    if (part === undefined) return undefined;
    if (segment.kind === 2) {
      parameters[segment.name] = parts.slice(i).map(decode).join('/');
      return parameters;
    }
    if (segment.kind === 0 && decode(part) !== segment.literal) return undefined;
    if (segment.kind === 1) {
      if (part === '') return undefined;
      parameters[segment.name] = decode(part);
    }
  }
  return parts.length === route.segments.length ? parameters : undefined;
}

function isText(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return (
    type.startsWith('text/') ||
    type === 'application/json' ||
    type.endsWith('+json') ||
    type === 'application/xml' ||
    type.endsWith('+xml') ||
    type === 'application/javascript'
  );
}

function clfTime(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${pad(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
}

/** Reads the body; `undefined` once it passes the limit (the rest is drained, not kept). */
function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function buildEvent(
  request: IncomingMessage,
  body: Buffer,
  routeKey: string,
  pathParameters: Record<string, string>,
  requestId: string,
): APIGatewayProxyEventV2 {
  const url = request.url ?? '/';
  const queryAt = url.indexOf('?');
  const rawPath = queryAt === -1 ? url : url.slice(0, queryAt);
  const rawQueryString = queryAt === -1 ? '' : url.slice(queryAt + 1);

  // Repeated headers are joined with commas; cookies move to their own field, as in 2.0.
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i]!.toLowerCase();
    const value = request.rawHeaders[i + 1]!;
    if (name === 'cookie') cookies.push(...value.split(';').map((cookie) => cookie.trim()).filter(Boolean));
    else headers[name] = name in headers ? `${headers[name]},${value}` : value;
  }
  const sourceIp = (request.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${headers['x-forwarded-for']}, ${sourceIp}` : sourceIp;
  headers['x-forwarded-port'] = String(request.socket.localPort ?? '');
  headers['x-forwarded-proto'] = 'http';
  headers['x-amzn-trace-id'] = `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;

  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawQueryString)) {
    query[name] = name in query ? `${query[name]},${value}` : value;
  }

  const now = new Date();
  const domainName = (headers.host ?? 'localhost').replace(/:\d+$/, '');
  const text = isText(headers['content-type']);
  const method = request.method ?? 'GET';
  return {
    version: '2.0',
    routeKey,
    rawPath,
    rawQueryString,
    ...(cookies.length ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
    ...(Object.keys(pathParameters).length ? { pathParameters } : {}),
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: 'local',
      domainName,
      domainPrefix: domainName.split('.')[0]!,
      http: {
        method,
        path: rawPath,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey,
      stage: '$default',
      time: clfTime(now),
      timeEpoch: now.getTime(),
    },
    ...(body.length ? { body: body.toString(text ? 'utf8' : 'base64') } : {}),
    isBase64Encoded: body.length > 0 && !text,
  };
}

function lambdaContext(functionName: string, timeoutSeconds: number): Context {
  const deadline = Date.now() + timeoutSeconds * 1000;
  const today = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
  const callbackStyle = () => {
    throw new Error('callback-style completion is not supported: return a promise');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `${today}/[$LATEST]${randomBytes(16).toString('hex')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: callbackStyle,
    fail: callbackStyle,
    succeed: callbackStyle,
  };
}

/** API Gateway's reading of a 2.0 result: a structured result, or any JSON value as a 200 body. */
function toStructured(result: unknown): APIGatewayProxyStructuredResultV2 {
  if (typeof result === 'object' && result !== null && 'statusCode' in result) {
    const structured = result as APIGatewayProxyStructuredResultV2;
    const status = structured.statusCode;
    if (!Number.isInteger(status) || status! < 100 || status! > 599) throw new Error(`invalid statusCode ${String(status)}`);
    return structured;
  }
  return {
    statusCode: 200,
    headers: { 'content-type': 'application/json' },
    body: typeof result === 'string' ? result : JSON.stringify(result ?? null),
  };
}

function writeResult(response: ServerResponse, result: APIGatewayProxyStructuredResultV2, requestId: string): void {
  const body = result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0);
  for (const [name, value] of Object.entries(result.headers ?? {})) response.setHeader(name, String(value));
  if (result.cookies?.length) response.setHeader('set-cookie', result.cookies);
  response.setHeader('apigw-requestid', requestId);
  response.setHeader('content-length', body.length);
  response.writeHead(result.statusCode!);
  response.end(body);
}

function writeMessage(response: ServerResponse, statusCode: number, message: string, requestId: string): void {
  writeResult(response, { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message }) }, requestId);
}

function logError(message: string, details: Record<string, unknown>, error: unknown): void {
  const reason = error instanceof Error ? (error.stack ?? error.message) : String(error);
  console.error(JSON.stringify({ level: 'error', source: 'local-gateway', message, ...details, error: reason }));
}

function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  if (error.code === 'EADDRINUSE') return new LocalCloudError(`port ${port} is already in use; set PORT to another`);
  if (error.code === 'EACCES') return new LocalCloudError(`port ${port} needs privileges to listen on; set PORT to another`);
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
    return new LocalCloudError(`cannot listen on ${host}: no such local address; set HOST to another`);
  }
  return new LocalCloudError(`cannot listen on ${host}:${port}: ${error.message}`);
}

/** Starts the gateway; resolves once it listens. */
export function startGateway(options: GatewayOptions): Promise<Gateway> {
  const compiled = options.routes.map(compile).sort(bySpecificity);
  const handlerDir = options.handlerDir ?? DEFAULT_HANDLER_DIR;
  const modules = new Map<string, Promise<HttpHandler>>();

  function load(name: string): Promise<HttpHandler> {
    let loaded = modules.get(name);
    if (!loaded) {
      loaded = import(new URL(`${name}.ts`, handlerDir).href).then((module: { handler?: unknown }) => {
        if (typeof module.handler !== 'function') throw new Error(`handler module ${name} does not export a handler function`);
        return module.handler as HttpHandler;
      });
      // A failed load is retried on the next request rather than remembered.
      loaded.catch(() => modules.delete(name));
      modules.set(name, loaded);
    }
    return loaded;
  }

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    // API Gateway's request id: in the event and in the `apigw-requestid` response header.
    const requestId = randomBytes(11).toString('base64');
    const body = await readBody(request);
    if (!body) return writeMessage(response, 413, 'Request body is too large', requestId);

    const path = (request.url ?? '/').split('?')[0]!;
    const parts = path.split('/').slice(1);
    let found: { route: CompiledRoute; parameters: Record<string, string> } | undefined;
    for (const route of compiled) {
      const parameters = route.route.method === request.method ? match(route, parts) : undefined;
      if (parameters) {
        found = { route, parameters };
        break;
      }
    }
    if (!found) return writeMessage(response, 404, 'Not Found', requestId);

    const { route, routeKey } = found.route;
    const event = buildEvent(request, body, routeKey, found.parameters, requestId);
    const functionName = typeof route.handler === 'string' ? `agent-sessions-${route.handler}` : 'agent-sessions-local';
    const context = lambdaContext(functionName, route.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS);
    let result: APIGatewayProxyStructuredResultV2;
    try {
      await options.ready;
      const handler = typeof route.handler === 'string' ? await load(route.handler) : route.handler;
      result = toStructured(await handler(event, context));
    } catch (error) {
      // As API Gateway does when the function fails: a bare 500, the details in the log.
      logError('handler failed', { routeKey, awsRequestId: context.awsRequestId }, error);
      return writeMessage(response, 500, 'Internal Server Error', requestId);
    }
    writeResult(response, result, requestId);
  }

  const server: Server = createServer((request, response) => {
    serve(request, response).catch((error: unknown) => {
      logError('request failed', { url: request.url }, error);
      if (!response.headersSent) response.destroy();
    });
  });
  // Outlast clients' idle keep-alive timers so they, not the server, close idle
  // connections: a request sent on a connection the server is closing would fail.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, options.host, options.port)));
    server.listen(options.port, options.host, () => {
      server.removeAllListeners('error');
      resolve({
        address: server.address() as AddressInfo,
        preload: async () => {
          const names = new Set(options.routes.flatMap((route) => (typeof route.handler === 'string' ? [route.handler] : [])));
          await Promise.allSettled([...names].map(load));
        },
        stop: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeIdleConnections();
            // Requests still running (a long wait) are cut after a short grace.
            setTimeout(() => server.closeAllConnections(), 2000).unref();
          }),
      });
    });
  });
}
