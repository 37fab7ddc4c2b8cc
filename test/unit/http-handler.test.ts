import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defineOperation } from '#contracts/operation';
import { ConflictError, ForbiddenError, LockedError, NotFoundError, QuotaExceededError, UnavailableError } from '#core/errors';
import { defineHandler } from '#http/handler';

const route = { method: 'POST', path: '/things/{id}', handler: 'test', auth: 'none', access: [] } as const;
const context = { awsRequestId: 'aws-request' } as Context;

function event(overrides: Partial<APIGatewayProxyEventV2> = {}): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'POST /things/{id}',
    rawPath: '/things/t1',
    rawQueryString: 'limit=5',
    headers: { 'idempotency-key': 'k1' },
    pathParameters: { id: 't1' },
    queryStringParameters: { limit: '5' },
    requestContext: { requestId: 'req-1' } as APIGatewayProxyEventV2['requestContext'],
    body: '{"name":"n"}',
    isBase64Encoded: false,
    ...overrides,
  };
}

const echoOperation = defineOperation({
  route,
  tag: 'Test',
  summary: 'Echo the validated input',
  input: {
    params: z.object({ id: z.string().min(2) }),
    query: z.object({ limit: z.coerce.number().int().max(10) }),
    headers: z.object({ 'idempotency-key': z.string().max(3) }),
    body: z.strictObject({ name: z.string() }),
  },
  responses: { 200: { description: 'The input.', body: z.record(z.string(), z.unknown()) } },
  errors: [],
});

const echo = defineHandler(echoOperation, async (request) => ({
  status: 200,
  body: { params: request.params, query: request.query, headers: request.headers, body: request.body, raw: request.rawBody },
}));

/** An operation without input whose handler only throws. */
const failingOperation = defineOperation({ route, tag: 'Test', summary: 'Fail', input: {}, responses: { 200: { description: 'Never.' } }, errors: [] });

const call = async (overrides?: Partial<APIGatewayProxyEventV2>) => {
  const res = await echo(event(overrides), context);
  return { ...res, json: res.body ? JSON.parse(res.body) : undefined };
};

describe('defineHandler', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('hands typed, validated input to the handler and stamps the request id', async () => {
    vi.spyOn(process.stdout, 'write').mockReturnValue(true);

    const res = await call();

    expect(res.statusCode).toBe(200);
    expect(res.headers?.['x-request-id']).toBe('req-1');
    expect(res.json).toEqual({
      params: { id: 't1' },
      query: { limit: 5 },
      headers: { 'idempotency-key': 'k1' },
      body: { name: 'n' },
      raw: '{"name":"n"}',
    });
  });

  it.each([
    ['path', { pathParameters: { id: 't' } }, 'invalid path field "id"'],
    ['query', { queryStringParameters: { limit: '50' } }, 'invalid query field "limit"'],
    ['header', { headers: { 'idempotency-key': 'toolong' } }, 'invalid header field "idempotency-key"'],
    ['body', { body: '{"name": 1}' }, 'invalid body field "name"'],
    ['unknown body field', { body: '{"name": "n", "x": 1}' }, 'invalid body: Unrecognized key: "x"'],
    ['non-JSON body', { body: '{' }, 'request body is not valid JSON'],
    ['missing body', { body: undefined }, 'request body is required'],
  ])('answers 400 naming the %s problem', async (_case, overrides, message) => {
    const res = await call(overrides as Partial<APIGatewayProxyEventV2>);

    expect(res.statusCode).toBe(400);
    expect(res.json.message).toContain(message);
  });

  it('decodes a base64 body as API Gateway sends it without a text content type', async () => {
    const res = await call({ body: Buffer.from('{"name":"b64"}').toString('base64'), isBase64Encoded: true });

    expect(res.json.body).toEqual({ name: 'b64' });
  });

  it.each([
    [new NotFoundError('no such thing'), 404, { message: 'no such thing' }],
    [new ConflictError('other body'), 409, { message: 'other body' }],
    [new LockedError('busy'), 423, { message: 'busy' }],
    [new QuotaExceededError('spent'), 429, { message: 'spent' }],
    [new ForbiddenError('nope', 'not_provisioned'), 403, { message: 'nope', code: 'not_provisioned' }],
    [new UnavailableError('later', 7), 503, { message: 'later' }],
  ])('maps %s to its status', async (error, status, body) => {
    vi.spyOn(process.stderr, 'write').mockReturnValue(true);
    const failing = defineHandler(failingOperation, async () => {
      throw error;
    });

    const res = await failing(event(), context);

    expect(res.statusCode).toBe(status);
    expect(JSON.parse(res.body!)).toEqual(body);
    if (status === 503) expect(res.headers?.['retry-after']).toBe('7');
  });

  it('answers an unexpected fault with a generic 500 and the request id, logging the detail', async () => {
    const logged = vi.spyOn(process.stderr, 'write').mockReturnValue(true);
    const failing = defineHandler(failingOperation, async () => {
      throw new TypeError('secret internals');
    });

    const res = await failing(event(), context);

    expect(res.statusCode).toBe(500);
    expect(JSON.parse(res.body!)).toEqual({ message: 'Internal server error', request_id: 'req-1' });
    expect(String(logged.mock.calls[0]![0])).toContain('secret internals');
  });
});
