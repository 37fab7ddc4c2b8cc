import { describe, expect, it } from 'vitest';
import { path, retryDecision, Transport } from '../../client/core';
import {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  errorFor,
  GatewayTimeoutError,
  InternalServerError,
  InvalidArgumentError,
  NotFoundError,
  PermissionDeniedError,
  QuotaExceededError,
  RunFailedError,
  ServiceUnavailableError,
  SessionLockedError,
} from '../../client/errors';
import { PagePromise } from '../../client/pagination';

const headers = (entries: Record<string, string> = {}) => new Headers(entries);

describe('errorFor', () => {
  it.each([
    [400, BadRequestError],
    [401, AuthenticationError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [409, ConflictError],
    [423, SessionLockedError],
    [429, QuotaExceededError],
    [500, InternalServerError],
    [502, RunFailedError],
    [503, ServiceUnavailableError],
    [504, GatewayTimeoutError],
  ])('maps %i to its own class', (status, ErrorClass) => {
    const error = errorFor(status, { message: 'm' }, headers());

    expect(error).toBeInstanceOf(ErrorClass);
    expect(error).toMatchObject({ status, message: 'm' });
  });

  it('keeps the extra fields of each body: code, kind, invocation key, request id, Retry-After', () => {
    expect((errorFor(403, { message: 'm', code: 'not_provisioned' }, headers()) as PermissionDeniedError).code).toBe('not_provisioned');
    expect((errorFor(502, { message: 'm', kind: 'crash' }, headers()) as RunFailedError).kind).toBe('crash');
    expect((errorFor(504, { message: 'm', invocation_key: 'k' }, headers()) as GatewayTimeoutError).invocationKey).toBe('k');
    expect((errorFor(504, { message: 'Gateway Timeout' }, headers({ 'idempotency-key': 'h' })) as GatewayTimeoutError).invocationKey).toBe('h');
    expect((errorFor(500, { message: 'm', request_id: 'r' }, headers()) as InternalServerError).requestId).toBe('r');
    expect((errorFor(503, { message: 'm' }, headers({ 'retry-after': '7' })) as ServiceUnavailableError).retryAfterSeconds).toBe(7);
  });

  it('gives a plain APIError for another status, and a message when the body has none', () => {
    const teapot = errorFor(418, 'short and stout', headers());
    const empty = errorFor(504, undefined, headers());

    expect(teapot.constructor).toBe(APIError);
    expect(teapot.message).toBe('short and stout');
    expect(empty.message).toBe('the service answered 504 with no message');
  });
});

describe('retryDecision', () => {
  const status = (code: number, entries?: Record<string, string>) => ({ kind: 'status' as const, status: code, headers: headers(entries) });

  it('retries reads and keyed requests after a connection failure or a 503, up to maxRetries', () => {
    for (const mode of ['idempotent', 'keyed'] as const) {
      expect(retryDecision(mode, { kind: 'connection', maybeSent: true }, 0, 2).retry).toBe(true);
      expect(retryDecision(mode, status(503), 1, 2).retry).toBe(true);
      expect(retryDecision(mode, status(503), 2, 2).retry).toBe(false);
    }
  });

  it('re-sends a request that is not safe to repeat only when it certainly never arrived', () => {
    expect(retryDecision('unsent-only', { kind: 'connection', maybeSent: false }, 0, 2).retry).toBe(true);
    expect(retryDecision('unsent-only', { kind: 'connection', maybeSent: true }, 0, 2).retry).toBe(false);
    expect(retryDecision('unsent-only', status(503), 0, 2).retry).toBe(false);
  });

  it('never retries a status that means something to the caller', () => {
    for (const code of [400, 401, 403, 404, 409, 423, 429, 500, 502, 504]) {
      expect(retryDecision('keyed', status(code), 0, 5).retry, String(code)).toBe(false);
      expect(retryDecision('idempotent', status(code), 0, 5).retry, String(code)).toBe(false);
    }
  });

  it('lets a follower retry any connection failure, a 429 and every 5xx, but no other status', () => {
    expect(retryDecision('follow', { kind: 'connection', maybeSent: true }, 0, 2).retry).toBe(true);
    for (const code of [429, 500, 502, 503, 504]) expect(retryDecision('follow', status(code), 0, 2).retry, String(code)).toBe(true);
    for (const code of [400, 401, 403, 404, 409]) expect(retryDecision('follow', status(code), 0, 5).retry, String(code)).toBe(false);
    expect(retryDecision('follow', status(500), 2, 2).retry).toBe(false);
    expect(retryDecision('follow', status(429, { 'retry-after': '2' }), 0, 2)).toEqual({ retry: true, delayMs: 2000 });
    expect(retryDecision('follow', status(429, { 'retry-after': '3600' }), 0, 2)).toEqual({ retry: false });
  });

  it('waits as long as Retry-After says, and gives up on a very long one', () => {
    expect(retryDecision('idempotent', status(503, { 'retry-after': '3' }), 0, 2)).toEqual({ retry: true, delayMs: 3000 });
    expect(retryDecision('idempotent', status(503, { 'retry-after': '3600' }), 0, 2)).toEqual({ retry: false });
  });

  it('backs off exponentially, with jitter below the nominal delay, up to a cap', () => {
    const delays = [0, 1, 2, 3, 10].map((attempt) => (retryDecision('idempotent', { kind: 'connection', maybeSent: true }, attempt, 20) as { delayMs: number }).delayMs);

    expect(delays[0]).toBeGreaterThanOrEqual(375);
    expect(delays[0]).toBeLessThanOrEqual(500);
    expect(delays[3]).toBeGreaterThanOrEqual(3000);
    expect(delays[4]).toBeLessThanOrEqual(8000);
  });
});

describe('path', () => {
  it('percent-encodes each value as one segment', () => {
    expect(path`/sessions/${'a:b'}/audit`).toBe('/sessions/a%3Ab/audit');
    expect(path`/agents/${'a/b'}/revisions/${'r?x'}`).toBe('/agents/a%2Fb/revisions/r%3Fx');
  });

  it('refuses values a URL would resolve away', () => {
    for (const value of ['', '.', '..']) expect(() => path`/sessions/${value}`).toThrow(InvalidArgumentError);
  });
});

describe('Transport', () => {
  /** A fetch answering from a script, recording each request; no network. */
  function scripted(...responses: Response[]) {
    const calls: { url: string; init: RequestInit }[] = [];
    const fetch = (async (url: URL, init: RequestInit) => {
      calls.push({ url: String(url), init });
      return responses.shift()!;
    }) as unknown as typeof globalThis.fetch;
    return { calls, fetch };
  }
  const json = (status: number, body: unknown, extra: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...extra } });

  it('retries a read after a 503 as Retry-After says, and returns the answer', async () => {
    const { calls, fetch } = scripted(json(503, { message: 'spans not readable yet' }, { 'retry-after': '0' }), json(200, { ok: true }));
    const transport = new Transport({ baseUrl: 'http://service.test/', token: 't', fetch });

    const response = await transport.request({ method: 'GET', path: '/traces/k', query: { payloads: false, after: undefined }, retry: 'idempotent' });

    expect(response.body).toEqual({ ok: true });
    expect(calls.map((c) => c.url)).toEqual(['http://service.test/traces/k?payloads=false', 'http://service.test/traces/k?payloads=false']);
    expect(new Headers(calls[0]!.init.headers).get('authorization')).toBe('Bearer t');
  });

  it('throws the mapped error at once for a status that is not retried, and reads 204 as no body', async () => {
    const { calls, fetch } = scripted(json(423, { message: 'busy' }), new Response(null, { status: 204 }));
    const transport = new Transport({ baseUrl: 'http://service.test', fetch });

    await expect(transport.request({ method: 'POST', path: '/sessions/s', body: '{}', retry: 'keyed' })).rejects.toBeInstanceOf(SessionLockedError);
    expect((await transport.request({ method: 'DELETE', path: '/sessions/s', retry: 'idempotent' })).body).toBeUndefined();
    expect(calls).toHaveLength(2);
    expect(new Headers(calls[0]!.init.headers).get('authorization')).toBeNull();
  });
});

describe('PagePromise', () => {
  const pages: Record<string, { items: number[]; next_cursor?: string }> = {
    start: { items: [1, 2], next_cursor: 'b' },
    b: { items: [], next_cursor: 'c' },
    c: { items: [3] },
  };

  it('awaits to the first page and iterates every item, through empty pages, until no cursor', async () => {
    const fetched: (string | undefined)[] = [];
    const list = new PagePromise(async (after) => (fetched.push(after), pages[after ?? 'start']!), (page) => page.items, undefined);

    expect((await list).items).toEqual([1, 2]);
    expect(await list.all()).toEqual([1, 2, 3]);
    expect(fetched).toEqual([undefined, 'b', 'c']);
  });
});
