import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { HttpHandler } from '#http/handler';

// The handler runs in this process against the local cloud, so a test can point it at a
// table or bucket that does not exist, which the shared gateway cannot be made to do.
const event = {
  version: '2.0',
  routeKey: 'GET /health',
  rawPath: '/health',
  rawQueryString: '',
  headers: {},
  requestContext: { requestId: 'health-test', http: { method: 'GET', path: '/health' } },
  isBase64Encoded: false,
} as unknown as APIGatewayProxyEventV2;
const context = { awsRequestId: 'health-test' } as Context;

describe('GET /health against unreachable storage', () => {
  let handler: HttpHandler;

  beforeAll(async () => {
    vi.stubEnv('LOG_LEVEL', 'error');
    ({ handler } = await import('#functions/handlers/get-health'));
  });

  afterEach(() => {
    vi.stubEnv('TABLE_NAME', inject('serviceEnv').TABLE_NAME!);
    vi.stubEnv('PAYLOAD_BUCKET', inject('serviceEnv').PAYLOAD_BUCKET!);
  });

  it('answers 200 when both answer', async () => {
    const res = await handler(event, context);

    expect(res.statusCode).toBe(200);
  });

  it('answers 503 when the table is missing', async () => {
    vi.stubEnv('TABLE_NAME', 'no-such-table');

    const res = await handler(event, context);

    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body!)).toEqual({ message: 'the table cannot be reached', status: 'unavailable' });
  });

  it('answers 503 when the bucket is missing', async () => {
    vi.stubEnv('PAYLOAD_BUCKET', 'no-such-bucket');

    const res = await handler(event, context);

    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body!)).toEqual({ message: 'the payload bucket cannot be reached', status: 'unavailable' });
  });
});
