import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentSessions, ConflictError, NotFoundError, type TraceEvent } from '../../client/index';
import { attemptEnded, attemptStarted, invocationEnded, spanEnded, spanStarted, startFakeTracesApi, type FakeTracesApi } from '../fakes/traces-api';

const model = { id: 'inv-1.att-1.1', type: 'model_call', name: 'gpt', startMs: 100 } as const;
const tool = { id: 'inv-1.att-1.2', parent: 'inv-1.att-1.1', type: 'tool_call', name: 'terminal', startMs: 600 } as const;
/** One attempt with a model call and the tool call it requested, then the answer. */
const script = [
  attemptStarted(1, 0),
  spanStarted(model),
  spanEnded(model, 500, 'SUCCEEDED', [10, 2]),
  spanStarted(tool),
  spanEnded(tool, 900),
  attemptEnded(1, 0, 1000, [10, 2]),
  invocationEnded(1000, { answer: 'hi' }),
];

async function collect(stream: AsyncIterable<TraceEvent>, until?: (events: TraceEvent[]) => boolean): Promise<TraceEvent[]> {
  const events: TraceEvent[] = [];
  for await (const event of stream) {
    events.push(event);
    if (until?.(events)) break;
  }
  return events;
}

describe('traces.events', () => {
  let api: FakeTracesApi;
  let client: AgentSessions;
  beforeEach(async () => {
    api = await startFakeTracesApi();
    client = new AgentSessions({ baseUrl: api.url, token: 't' });
  });
  afterEach(() => api.close());

  const eventRequests = () => api.requests.filter((r) => r.path.endsWith('/events'));

  it('follows pages of one event each until invocation_ended, long-polling with the cursors it was given', async () => {
    api.emit('k', ...script);

    const events = await collect(client.traces.events('k', { limit: 1 }));

    expect(events.map((e) => e.type)).toEqual(script.map((e) => e.type));
    expect(events.map((e) => e.seq)).toEqual(api.events('k').map((e) => e.seq));
    expect(eventRequests().map((r) => r.query)).toEqual(script.map((_, i) => ({ limit: '1', wait_seconds: '20', ...(i ? { after: `c${i}` } : {}) })));
    expect(eventRequests()[0]!.headers.authorization).toBe('Bearer t');
  });

  it('yields events as they are recorded while a request is held, and ends after invocation_ended', async () => {
    api.emit('k', script[0]!);
    const stream = client.traces.events('k');
    const seen: string[] = [];

    const following = (async () => {
      for await (const event of stream) seen.push(event.type);
    })();
    await waitFor(() => seen.length === 1 && eventRequests().length === 2);
    api.emit('k', ...script.slice(1));
    await following;

    expect(seen).toEqual(script.map((e) => e.type));
    expect(stream.ended).toBe(true);
    expect(stream.status).toBe('SUCCEEDED');
  });

  it('carries on from its cursor when the connection breaks, before or in the middle of an answer: no event twice, none missed', async () => {
    api.emit('k', ...script.slice(0, 3));
    const stream = client.traces.events('k', { limit: 2 });
    const seen: TraceEvent[] = [];

    const following = (async () => {
      for await (const event of stream) {
        seen.push(event);
        // After the first page the next two tries of the second one break; after the
        // second, the held request for the third breaks once the events it waited for came.
        if (seen.length === 2) api.fail('cut', 'reset');
        if (seen.length === 3) api.fail('cut');
      }
    })();
    await waitFor(() => seen.length === 3 && eventRequests().length === 5);
    api.emit('k', ...script.slice(3));
    await following;

    expect(seen.map((e) => e.seq)).toEqual(api.events('k').map((e) => e.seq));
    expect(eventRequests().map((r) => r.query.after)).toEqual([undefined, 'c2', 'c2', 'c2', 'c3', 'c3', 'c5']);
  }, 15_000);

  it('retries a 5xx or a 429 from the same cursor, and gives up on a 4xx', async () => {
    api.emit('k', ...script);
    api.fail({ status: 500 }, { status: 502 }, { status: 503, headers: { 'retry-after': '0' } }, { status: 429, headers: { 'retry-after': '0' } });

    const events = await collect(client.traces.events('k'));

    expect(events).toHaveLength(script.length);
    expect(eventRequests()).toHaveLength(5);
    await expect(collect(client.traces.events('missing'))).rejects.toBeInstanceOf(NotFoundError);
  }, 15_000);

  it('skips event types it does not know', async () => {
    api.emit('k', script[0]!, { type: 'budget_warning', time: script[0]!.time, spent: 1 }, ...script.slice(1));

    const events = await collect(client.traces.events('k', { limit: 2 }));

    expect(events.map((e) => e.type)).toEqual(script.map((e) => e.type));
  });

  it('stops quietly when its signal aborts, and resumes exactly from cursor and lastSeq, even mid-page', async () => {
    api.emit('k', ...script.slice(0, 5));
    const controller = new AbortController();
    const stream = client.traces.events('k', { limit: 3 });

    // Stop after the fourth event (the second page's first), and a follower while its request is held.
    const first = await collect(stream, (events) => events.length === 4);
    const resumed = client.traces.events('k', { after: stream.cursor, last_seq: stream.lastSeq });
    const held = collect(client.traces.events('k', { after: 'c5' }, { signal: controller.signal }));
    await waitFor(() => eventRequests().length === 3);
    controller.abort();
    expect(await held).toEqual([]);
    api.emit('k', ...script.slice(5));
    const rest = await collect(resumed);

    expect(stream.cursor).toBe('c3');
    expect([...first, ...rest].map((e) => e.seq)).toEqual(api.events('k').map((e) => e.seq));
  });

  it('polls once a second when told not to be held', async () => {
    api.emit('k', script[0]!);
    const stream = client.traces.events('k', { wait_seconds: 0 });
    const started = Date.now();

    const following = collect(stream);
    await waitFor(() => eventRequests().length === 2);
    api.emit('k', ...script.slice(1));
    await following;

    expect(eventRequests().every((r) => r.query.wait_seconds === '0')).toBe(true);
    expect(eventRequests()).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });
});

describe('traces.cancel', () => {
  let api: FakeTracesApi;
  let client: AgentSessions;
  beforeEach(async () => {
    api = await startFakeTracesApi();
    client = new AgentSessions({ baseUrl: api.url, token: 't' });
  });
  afterEach(() => api.close());

  it('cancels a running invocation and answers the same again; an invocation that ended otherwise is a ConflictError with its status', async () => {
    api.emit('running', script[0]!);
    api.emit('done', ...script);

    const cancelled = await client.traces.cancel('running');
    const again = await client.traces.cancel('running');
    const conflict = await client.traces.cancel('done').catch((error: unknown) => error);

    expect(cancelled).toMatchObject({ invocation_key: 'running', status: 'FAILED', failure: { kind: 'interrupted' }, usage: { input_tokens: 10, output_tokens: 2 } });
    expect(again).toEqual(cancelled);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect((conflict as ConflictError).invocationStatus).toBe('SUCCEEDED');
    expect(api.requests.filter((r) => r.method === 'POST').map((r) => [r.path, r.body])).toEqual([
      ['/traces/running/cancel', ''],
      ['/traces/running/cancel', ''],
      ['/traces/done/cancel', ''],
    ]);
  });
});

/** Resolves once `condition` holds (checked every 10 ms, for up to 5 s). */
async function waitFor(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 5000) throw new Error('condition never held');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
