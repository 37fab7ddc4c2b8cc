/**
 * The HTTP kit: one middy chain for every route. It stamps a request id on the logs and
 * the response, authenticates as the route table says, parses and validates path, query,
 * header and body input with the operation's zod contracts, and maps errors to statuses.
 * Handlers receive typed, validated input and return one of the operation's responses.
 */
import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { z } from 'zod';
import type { InputSchemas, Operation, Responses } from '#contracts/operation';
import { InvalidInputError } from '#core/errors';
import { createLogger, type Logger } from '#kit/log';
import { METRIC } from '#kit/metric-names';
import { count } from '#kit/metrics';
import type { Principal, UserPrincipal } from '#core/principal';
import type { Route, RouteAuth } from '#functions/routes';
import { authenticate } from './authenticate';
import { errorResponse } from './errors';
import { json } from './response';

export type { InputSchemas } from '#contracts/operation';

type Parsed<S, K extends keyof InputSchemas> = S extends { [P in K]: z.ZodType } ? z.output<S[K]> : undefined;

type PrincipalFor<A extends RouteAuth> = A extends 'user' ? UserPrincipal : A extends 'principal' ? Principal : undefined;

/** What a handler receives: validated input, the caller, and request-scoped tools. */
export interface HttpRequest<S extends InputSchemas, A extends RouteAuth> {
  params: Parsed<S, 'params'>;
  query: Parsed<S, 'query'>;
  headers: Parsed<S, 'headers'>;
  body: Parsed<S, 'body'>;
  /** The body exactly as sent, for idempotency digests. */
  rawBody: string;
  principal: PrincipalFor<A>;
  requestId: string;
  log: Logger;
  /** Sets a header on the response, whatever it turns out to be (errors included). */
  setHeader(name: string, value: string): void;
}

export interface HttpReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One of the operation's declared responses: its status, and a body of its schema (none without one). */
export type ReplyOf<S extends Responses> = {
  [K in Extract<keyof S, number>]: S[K] extends { body: infer B extends z.ZodType }
    ? { status: K; body: z.input<B>; headers?: Record<string, string> }
    : { status: K; body?: undefined; headers?: Record<string, string> };
}[Extract<keyof S, number>];

interface State {
  requestId: string;
  /** Headers every response of this request carries. */
  headers: Record<string, string>;
  log: Logger;
  startedAt: number;
  principal?: Principal;
  input?: { params: unknown; query: unknown; headers: unknown; body: unknown; rawBody: string };
}

type Event = APIGatewayProxyEventV2;
type Result = APIGatewayProxyStructuredResultV2;
type ServiceContext = Context & { state: State };

/** Request id, access log line, 4xx and 5xx metrics by route, and the `x-request-id` header. */
function observe(route: Route): MiddlewareObj<Event, Result, Error, ServiceContext> {
  const routeKey = `${route.method} ${route.path}`;
  const finish = (request: { context: ServiceContext; response: Result | null }) => {
    const { state } = request.context;
    const response = request.response ?? { statusCode: 500 };
    response.headers = { ...response.headers, ...state.headers, 'x-request-id': state.requestId };
    request.response = response;
    const status = response.statusCode ?? 200;
    if (status >= 500) count(METRIC.http5xx, { route: routeKey });
    else if (status >= 400) count(METRIC.http4xx, { route: routeKey });
    state.log.info('request', {
      status: response.statusCode,
      duration_ms: Date.now() - state.startedAt,
      organization_id: state.principal?.organizationId,
      principal: state.principal?.kind,
    });
  };
  return {
    name: 'observe',
    before: (request) => {
      const requestId = request.event.requestContext?.requestId || request.context.awsRequestId;
      request.context.state = {
        requestId,
        headers: {},
        startedAt: Date.now(),
        log: createLogger({ request_id: requestId, route: routeKey }),
      };
    },
    after: finish,
    onError: finish,
  };
}

/** Turns any thrown error into the response the spec defines. */
function mapErrors(): MiddlewareObj<Event, Result, Error, ServiceContext> {
  return {
    name: 'mapErrors',
    onError: (request) => {
      const { state } = request.context;
      request.response = errorResponse(request.error, state.requestId, state.log);
    },
  };
}

function authentication(auth: RouteAuth): MiddlewareObj<Event, Result, Error, ServiceContext> {
  return {
    name: 'authentication',
    before: async (request) => {
      if (auth === 'none') return;
      request.context.state.principal = await authenticate(request.event.headers?.authorization, auth);
    },
  };
}

function describeIssue(location: string, issue: z.core.$ZodIssue): string {
  const field = issue.path.map(String).join('.');
  return field ? `invalid ${location} field "${field}": ${issue.message}` : `invalid ${location}: ${issue.message}`;
}

function check<T extends z.ZodType | undefined>(schema: T, value: unknown, location: string) {
  if (!schema) return undefined;
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw new InvalidInputError(result.error.issues.map((i) => describeIssue(location, i)).join('; '));
  return result.data;
}

function readBody(event: Event, required: boolean): { raw: string; value: unknown } {
  const raw = event.body ? (event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body) : '';
  if (!required) return { raw, value: undefined };
  if (raw.trim() === '') throw new InvalidInputError('request body is required (JSON)');
  try {
    return { raw, value: JSON.parse(raw) };
  } catch {
    throw new InvalidInputError('request body is not valid JSON');
  }
}

function validation(schemas: InputSchemas): MiddlewareObj<Event, Result, Error, ServiceContext> {
  return {
    name: 'validation',
    before: (request) => {
      const { event } = request;
      const body = readBody(event, schemas.body !== undefined);
      request.context.state.input = {
        params: check(schemas.params, event.pathParameters, 'path'),
        query: check(schemas.query, event.queryStringParameters, 'query'),
        headers: check(schemas.headers, event.headers, 'header'),
        body: check(schemas.body, body.value, 'body'),
        rawBody: body.raw,
      };
    },
  };
}

/** What Lambda (and the local gateway) calls. */
export type HttpHandler = (event: Event, context: Context) => Promise<Result>;

/** A Lambda handler for one operation: a route of the route table and its contract. */
export function defineHandler<R extends Route, S extends InputSchemas, O extends Responses>(
  operation: Operation<R, S, O>,
  handle: (request: HttpRequest<S, R['auth']>) => Promise<ReplyOf<O>>,
): HttpHandler {
  const { route, input } = operation;
  // The chain adds `state` to the context itself; callers pass a plain Lambda context.
  return middy<Event, Result, Error, ServiceContext>()
    .use(observe(route))
    .use(mapErrors())
    .use(authentication(route.auth))
    .use(validation(input))
    .handler(async (_event, context) => {
      const { state } = context;
      const reply: HttpReply = await handle({
        ...state.input!,
        principal: state.principal,
        requestId: state.requestId,
        log: state.log,
        setHeader: (name: string, value: string) => {
          state.headers[name.toLowerCase()] = value;
        },
      } as HttpRequest<S, R['auth']>);
      return json(reply.status, reply.body, reply.headers);
    }) as unknown as HttpHandler;
}
