import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_BODY_BYTES, startGateway, type Gateway, type GatewayRoute } from '#local/gateway';

const routes: GatewayRoute[] = [
  { method: 'GET', path: '/items/{id}', handler: 'echo-handler', timeoutSeconds: 10 },
  { method: 'GET', path: '/items/special', handler: 'echo-handler' },
  { method: 'POST', path: '/items', handler: 'echo-handler' },
  { method: 'GET', path: '/files/{path+}', handler: 'echo-handler' },
  { method: 'GET', path: '/missing', handler: 'no-such-handler' },
  { method: 'GET', path: '/inline', handler: async (event) => ({ statusCode: 204, headers: { 'x-route': event.routeKey } }) },
];

let gateway: Gateway;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** node:http rather than fetch: it can repeat headers and stream a body in chunks. */
function send(method: string, path: string, options: { headers?: OutgoingHttpHeaders; body?: Buffer | string; chunks?: string[] } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: gateway.address.port, method, path, headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    for (const chunk of options.chunks ?? []) req.write(chunk);
    req.end(options.body);
  });
}

async function echo(method: string, path: string, options: Parameters<typeof send>[2] = {}) {
  const answer = await send(method, path, options);
  expect(answer.status).toBe(200);
  return JSON.parse(answer.body.toString('utf8')) as { event: Record<string, any>; context: Record<string, any> };
}

beforeAll(async () => {
  gateway = await startGateway({ host: '127.0.0.1', port: 0, routes, handlerDir: new URL('./fixtures/', import.meta.url) });
});

afterAll(async () => {
  await gateway.stop();
});

describe('the local API Gateway', () => {
  it('builds an HTTP API payload 2.0 event', async () => {
    const { event } = await echo('GET', '/items/a%20b?x=1&x=2&y=%C3%A9&flag', {
      headers: { 'X-Multi': ['one', 'two'], Cookie: 'c1=v1; c2=v2', 'User-Agent': 'tests/1.0' },
    });

    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'GET /items/{id}',
      rawPath: '/items/a%20b',
      rawQueryString: 'x=1&x=2&y=%C3%A9&flag',
      cookies: ['c1=v1', 'c2=v2'],
      queryStringParameters: { x: '1,2', y: 'é', flag: '' },
      pathParameters: { id: 'a b' },
      isBase64Encoded: false,
      requestContext: {
        accountId: '000000000000',
        apiId: 'local',
        domainName: '127.0.0.1',
        domainPrefix: '127',
        http: { method: 'GET', path: '/items/a%20b', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'tests/1.0' },
        routeKey: 'GET /items/{id}',
        stage: '$default',
      },
    });
    expect(event.headers).toMatchObject({ 'x-multi': 'one,two', 'user-agent': 'tests/1.0', 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'http' });
    expect(event.headers.cookie).toBeUndefined();
    expect(event.body).toBeUndefined();
    expect(event.requestContext.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
    expect(Math.abs(event.requestContext.timeEpoch - Date.now())).toBeLessThan(5000);
    expect(event.requestContext.requestId).toBeTruthy();
  });

  it('leaves out query and path parameters when there are none', async () => {
    const { event } = await echo('POST', '/items', { headers: { 'content-type': 'application/json' }, body: '{"a":1}' });

    expect(event.queryStringParameters).toBeUndefined();
    expect(event.pathParameters).toBeUndefined();
    expect(event.cookies).toBeUndefined();
    expect(event.body).toBe('{"a":1}');
    expect(event.isBase64Encoded).toBe(false);
  });

  it('base64-encodes bodies that are not text', async () => {
    const bytes = Buffer.from([0, 159, 146, 150, 255]);

    const { event } = await echo('POST', '/items', { headers: { 'content-type': 'application/octet-stream' }, body: bytes });

    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body, 'base64').equals(bytes)).toBe(true);
  });

  it('reads chunked bodies sent without a Content-Length', async () => {
    const { event } = await echo('POST', '/items', {
      headers: { 'content-type': 'text/plain; charset=utf-8', 'transfer-encoding': 'chunked' },
      chunks: ['hello ', 'chunked ', 'world'],
    });

    expect(event.body).toBe('hello chunked world');
  });

  it('prefers literal segments and supports greedy variables', async () => {
    const special = await echo('GET', '/items/special');
    const greedy = await echo('GET', '/files/a/b%20c/d.txt');

    expect(special.event.routeKey).toBe('GET /items/special');
    expect(greedy.event.pathParameters).toEqual({ path: 'a/b c/d.txt' });
  });

  it('gives the handler a Lambda-like context counting down from the route timeout', async () => {
    const { context } = await echo('GET', '/items/1');

    expect(context.functionName).toBe('agent-sessions-echo-handler');
    expect(context.awsRequestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(context.remainingMs).toBeGreaterThan(9000);
    expect(context.remainingMs).toBeLessThanOrEqual(10_000);
  });

  it('answers 404 like API Gateway for an unknown path or method', async () => {
    for (const [method, path] of [['GET', '/nowhere'], ['DELETE', '/items/1'], ['GET', '/items/1/extra'], ['GET', '/items/']]) {
      const answer = await send(method!, path!);

      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(JSON.parse(answer.body.toString())).toEqual({ message: 'Not Found' });
    }
  });

  it('answers 413 for a body over 10 MB without calling the handler', async () => {
    const answer = await send('POST', '/items', { headers: { 'content-type': 'text/plain' }, body: Buffer.alloc(MAX_BODY_BYTES + 1, 97) });

    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body.toString())).toEqual({ message: 'Request body is too large' });
  });

  it('answers a bare 500 when the handler throws or cannot be loaded, and logs why', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);

    const thrown = await send('GET', '/items/1?mode=throw');
    const missing = await send('GET', '/missing');

    expect(thrown.status).toBe(500);
    expect(JSON.parse(thrown.body.toString())).toEqual({ message: 'Internal Server Error' });
    expect(missing.status).toBe(500);
    expect(log.mock.calls.map(([line]) => String(line)).join('\n')).toContain('fixture failure');
    log.mockRestore();
  });

  it('writes structured results: status, headers, cookies, base64 bodies', async () => {
    const answer = await send('GET', '/items/1?mode=binary');

    expect(answer.status).toBe(201);
    expect(answer.headers['content-type']).toBe('application/octet-stream');
    expect(answer.headers['x-count']).toBe('3');
    expect(answer.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2']);
    expect(answer.headers['apigw-requestid']).toBeTruthy();
    expect([...answer.body]).toEqual([0, 1, 2, 255]);
  });

  it('reads a result without statusCode as a 200 JSON body, as API Gateway does', async () => {
    const answer = await send('GET', '/items/1?mode=plain');

    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(JSON.parse(answer.body.toString())).toEqual({ plain: true });
  });

  it('runs inline handlers and keeps connections alive', async () => {
    const answer = await send('GET', '/inline');

    expect(answer.status).toBe(204);
    expect(answer.headers['x-route']).toBe('GET /inline');
    expect(answer.headers.connection).toBe('keep-alive');
  });

  it('preloads every route\'s handler module before any request, whatever fails to load', async () => {
    const preloading = await startGateway({
      host: '127.0.0.1',
      port: 0,
      routes: [
        { method: 'GET', path: '/preloaded', handler: 'preload-handler' },
        { method: 'GET', path: '/missing', handler: 'no-such-handler' },
      ],
      handlerDir: new URL('./fixtures/', import.meta.url),
    });
    try {
      expect((globalThis as { preloadHandlerImports?: number }).preloadHandlerImports).toBeUndefined();

      await preloading.preload();

      expect((globalThis as { preloadHandlerImports?: number }).preloadHandlerImports).toBe(1);
      const answer = await fetch(`http://127.0.0.1:${preloading.address.port}/preloaded`);
      expect(await answer.json()).toEqual({ imports: 1 });
    } finally {
      await preloading.stop();
    }
  });

  it('holds requests until the cloud is ready', async () => {
    let release!: () => void;
    const ready = new Promise<void>((resolve) => (release = resolve));
    const held = await startGateway({ host: '127.0.0.1', port: 0, routes, handlerDir: new URL('./fixtures/', import.meta.url), ready });
    let answered = false;
    const pending = fetch(`http://127.0.0.1:${held.address.port}/inline`).then((response) => {
      answered = true;
      return response.status;
    });

    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(answered).toBe(false);
    release();
    expect(await pending).toBe(204);
    await held.stop();
  });
});
