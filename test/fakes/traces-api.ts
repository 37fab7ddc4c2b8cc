/**
 * A fake of the service's following endpoints on 127.0.0.1, for client and CLI tests that
 * need real HTTP (held requests, broken connections) but not the service:
 * - GET /traces/{key}/events: pages of what `emit` recorded, cursors `c<position>`, held
 *   while `wait_seconds` allows and nothing is new; `fail` scripts broken connections and
 *   error statuses for the next requests to it;
 * - POST /traces/{key}/cancel: ends a running invocation FAILED `interrupted`, 409 after
 *   any other end;
 * - POST /sessions/{id}: 202 with `wait_timeout_seconds=0`, else held until the
 *   invocation (the Idempotency-Key) ends: 200 with its message, 502, or 504;
 * - GET /traces: `listPage` as it is.
 * Every request is recorded. No storage, no credentials checked.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An event as emitted: any type (unknown ones too), `seq` assigned by the fake. */
export type FakeEvent = { type: string; time: string } & Record<string, unknown>;

/** How one request to the events endpoint fails: reset before answering, cut mid-body, or an error status. */
export type Fault = 'reset' | 'cut' | { status: number; body?: unknown; headers?: Record<string, string> };

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface FakeTracesApi {
  url: string;
  requests: RecordedRequest[];
  /** The events of invocation `key` so far, with their `seq`. */
  events(key: string): (FakeEvent & { seq: number })[];
  /** Records events of invocation `key` (of session `s` unless a run named another) and wakes the requests held for them. */
  emit(key: string, ...events: FakeEvent[]): void;
  /** The next requests to the events endpoint fail this way, in order. */
  fail(...faults: Fault[]): void;
  /** What GET /traces answers. */
  listPage: unknown;
  close(): Promise<void>;
}

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
/** An instant `ms` after the fake's epoch. */
export const at = (ms: number) => new Date(T0 + ms).toISOString();

export const attemptStarted = (number: number, ms: number): FakeEvent => ({
  type: 'attempt_started',
  time: at(ms),
  attempt: { number, status: 'RUNNING', started_at: at(ms), usage: { input_tokens: 0, output_tokens: 0 } },
});

export const attemptEnded = (number: number, startMs: number, endMs: number, usage: [number, number], failure?: { kind: string; message: string }): FakeEvent => ({
  type: 'attempt_ended',
  time: at(endMs),
  attempt: { number, status: failure ? 'FAILED' : 'SUCCEEDED', started_at: at(startMs), ended_at: at(endMs), usage: { input_tokens: usage[0], output_tokens: usage[1] }, ...(failure ? { failure } : {}) },
});

interface SpanShape {
  id: string;
  parent?: string;
  type: 'model_call' | 'tool_call';
  name: string;
  startMs: number;
}

export const spanStarted = ({ id, parent, type, name, startMs }: SpanShape): FakeEvent => ({
  type: 'span_started',
  time: at(startMs),
  span: { id, parent_id: parent ?? null, type, name, status: 'RUNNING', started_at: at(startMs), ended_at: null, usage: null },
});

export const spanEnded = ({ id, parent, type, name, startMs }: SpanShape, endMs: number, status = 'SUCCEEDED', usage?: [number, number]): FakeEvent => ({
  type: 'span_ended',
  time: at(endMs),
  span: { id, parent_id: parent ?? null, type, name, status, started_at: at(startMs), ended_at: at(endMs), usage: usage ? { input_tokens: usage[0], output_tokens: usage[1] } : null },
});

export const invocationEnded = (ms: number, outcome: { answer: string } | { failure: { kind: string; message: string } }): FakeEvent => ({
  type: 'invocation_ended',
  time: at(ms),
  ...('answer' in outcome
    ? { status: 'SUCCEEDED', message: { cursor: 2, invocation_key: 'k', role: 'assistant', content: outcome.answer, created_at: at(ms) } }
    : { status: 'FAILED', failure: outcome.failure }),
});

interface Invocation {
  sessionId: string;
  events: (FakeEvent & { seq: number })[];
  wake: Set<() => void>;
  cancelled: boolean;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeTracesApi(): Promise<FakeTracesApi> {
  const invocations = new Map<string, Invocation>();
  const faults: Fault[] = [];
  const requests: RecordedRequest[] = [];
  let nextSeq = 1;

  const invocation = (key: string, sessionId = 's') => {
    let found = invocations.get(key);
    if (!found) invocations.set(key, (found = { sessionId, events: [], wake: new Set(), cancelled: false }));
    return found;
  };
  const endOf = (inv: Invocation) => inv.events.find((event) => event.type === 'invocation_ended');
  const emit = (key: string, ...events: FakeEvent[]) => {
    const inv = invocation(key);
    // Seqs rise but skip numbers, as the service's may.
    for (const event of events) inv.events.push({ ...event, seq: (nextSeq += 3) });
    for (const wake of inv.wake) wake();
  };
  /** Resolves once `ready()` holds after an emit, `ms` elapsed, or the client left. */
  const until = (inv: Invocation, res: ServerResponse, ready: () => boolean, ms: number) =>
    new Promise<void>((resolve) => {
      if (ready() || ms <= 0) return resolve();
      const done = () => {
        clearTimeout(timer);
        inv.wake.delete(check);
        resolve();
      };
      const check = () => ready() && done();
      const timer = setTimeout(done, ms);
      inv.wake.add(check);
      res.once('close', done);
    });
  const summary = (key: string, inv: Invocation) => {
    const end = endOf(inv);
    return {
      invocation_key: key,
      session_id: inv.sessionId,
      status: end?.status ?? 'RUNNING',
      spans_expired: false,
      started_at: at(0),
      ...(end ? { ended_at: end.time } : {}),
      usage: { input_tokens: 10, output_tokens: 2 },
      ...(end?.failure ? { failure: end.failure } : {}),
    };
  };

  async function events(key: string, query: Record<string, string>, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const inv = invocations.get(key);
    if (!inv) return json(res, 404, { message: `invocation ${key} not found` });
    const fault = faults.shift();
    if (fault === 'reset') return void req.socket.destroy();
    if (fault && fault !== 'cut') return json(res, fault.status, fault.body ?? { message: `fault ${fault.status}` }, fault.headers);
    const after = query.after === undefined ? 0 : Number(/^c(\d+)$/.exec(query.after)?.[1] ?? NaN);
    if (Number.isNaN(after)) return json(res, 400, { message: 'invalid cursor' });
    const limit = Number(query.limit ?? 100);
    await until(inv, res, () => inv.events.length > after || endOf(inv) !== undefined, Number(query.wait_seconds ?? 0) * 1000);
    const page = inv.events.slice(after, after + limit);
    const end = endOf(inv);
    const last = page.some((event) => event.type === 'invocation_ended');
    const text = JSON.stringify({ status: end?.status ?? 'RUNNING', events: page, ...(last ? {} : { next_cursor: `c${after + page.length}` }) });
    if (fault !== 'cut') return void res.writeHead(200, { 'content-type': 'application/json' }).end(text);
    // Half the body, then the connection breaks.
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
    res.write(text.slice(0, Math.floor(text.length / 2)), () => req.socket.destroy());
  }

  function cancel(key: string, res: ServerResponse): void {
    const inv = invocations.get(key);
    if (!inv) return json(res, 404, { message: `invocation ${key} not found` });
    const end = endOf(inv);
    if (end && !inv.cancelled) return json(res, 409, { message: `invocation ${key} already ended ${String(end.status)}`, status: end.status });
    if (!end) {
      inv.cancelled = true;
      emit(key, invocationEnded(60_000, { failure: { kind: 'interrupted', message: 'cancelled through the API' } }));
    }
    json(res, 200, summary(key, inv));
  }

  async function run(sessionId: string, query: Record<string, string>, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const key = String(req.headers['idempotency-key']);
    const inv = invocation(key, sessionId);
    const wait = Number(query.wait_timeout_seconds ?? 1800);
    const session = { id: sessionId, state: 'RUNNING', invocation_count: 1, created_at: at(0), updated_at: at(0), current_invocation_key: key };
    const headers = { 'idempotency-key': key };
    if (wait === 0 && !endOf(inv)) return json(res, 202, { session }, headers);
    await until(inv, res, () => endOf(inv) !== undefined, wait * 1000);
    const end = endOf(inv);
    if (!end) return json(res, 504, { message: 'the wait elapsed', invocation_key: key }, headers);
    const failure = end.failure as { kind: string; message: string } | undefined;
    if (failure) return json(res, 502, { message: failure.message, kind: failure.kind }, headers);
    json(res, 200, { session: { ...session, state: 'IDLE', current_invocation_key: undefined, updated_at: end.time }, message: { ...(end.message as object), invocation_key: key } }, headers);
  }

  const api: FakeTracesApi = {
    url: '',
    requests,
    events: (key) => invocations.get(key)?.events ?? [],
    emit,
    fail: (...more) => void faults.push(...more),
    listPage: { traces: [] },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const query = Object.fromEntries(url.searchParams);
    requests.push({ method: req.method ?? 'GET', path: url.pathname, query, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    const segments = url.pathname.split('/').slice(1).map(decodeURIComponent);
    if (req.method === 'GET' && segments[0] === 'traces' && segments.length === 3 && segments[2] === 'events') return events(segments[1]!, query, req, res);
    if (req.method === 'POST' && segments[0] === 'traces' && segments.length === 3 && segments[2] === 'cancel') return cancel(segments[1]!, res);
    if (req.method === 'POST' && segments[0] === 'sessions' && segments.length === 2) return run(segments[1]!, query, req, res);
    if (req.method === 'GET' && url.pathname === '/traces') return json(res, 200, api.listPage);
    json(res, 404, { message: `no route ${req.method} ${url.pathname}` });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return api;
}
