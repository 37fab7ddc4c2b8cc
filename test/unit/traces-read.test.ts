/**
 * Reading traces (`core/traces.ts`) against an in-memory store: the cursors of a trace and
 * of a search (what they fix, what they refuse), a payload that cannot be read, and the
 * answers for what does not exist. No network: the whole file runs in milliseconds.
 */
import { describe, expect, it } from 'vitest';
import { sign } from '#core/cursor';
import { InvalidInputError, NotFoundError, UnavailableError } from '#core/errors';
import type { Invocation } from '#core/model';
import { readTrace, searchTraces } from '#core/traces';
import { memoryTraceStore, span, type MemoryTraceStore } from '../fakes/memory-trace-store';

const NOW = Date.parse('2026-01-02T00:00:00Z');

const invocation = (key: string, overrides: Partial<Invocation> = {}): Invocation => ({
  invocation_key: key,
  session_id: 'session-1',
  session_position: 1,
  status: 'SUCCEEDED',
  agent_name: 'helper',
  agent_revision: '0123456789abcdef',
  body_sha256: 'x',
  started_at: '2026-01-01T00:00:00.000Z',
  ended_at: '2026-01-01T00:01:00.000Z',
  user_cursor: 1,
  usage: { input_tokens: 0, output_tokens: 0 },
  ...overrides,
});

/** The cursor a trace page answers with, if any (the expired form of a trace has none). */
const cursorOf = (trace: object): string | undefined => ('next_cursor' in trace ? (trace.next_cursor as string) : undefined);

/** A store with invocation `key-1` of one attempt and `spans` spans of it. */
function storeWithTrace(spans: number, overrides: Partial<Invocation> = {}): MemoryTraceStore {
  const store = memoryTraceStore();
  store.invocations.set('key-1', invocation('key-1', overrides));
  store.attemptsOf.set('key-1', [
    { number: 1, status: 'SUCCEEDED', started_at: '2026-01-01T00:00:00.000Z', usage: { input_tokens: 0, output_tokens: 0 }, steps: 1 },
  ]);
  store.spansOf.set('key-1', Array.from({ length: spans }, (_, i) => span(1, i + 1)));
  return store;
}

describe('reading a trace', () => {
  it('pages spans with a cursor that keeps the modes of the first page', async () => {
    const store = storeWithTrace(3);

    const first = await readTrace(store, 'key-1', { payloads: false, limit: 2 }, NOW);
    const second = await readTrace(store, 'key-1', { after: cursorOf(first) }, NOW);

    expect(first.spans.map((s) => s.id)).toEqual(['span-1-1', 'span-1-2']);
    expect(cursorOf(first)).toEqual(expect.any(String));
    expect(second.spans.map((s) => s.id)).toEqual(['span-1-3']);
    expect(second.spans[0]).not.toHaveProperty('input');
    expect(cursorOf(second)).toBeUndefined();
  });

  it('refuses a cursor of another invocation, one with other modes, and a signed one of another shape', async () => {
    const store = storeWithTrace(3);
    store.invocations.set('key-2', invocation('key-2'));
    const cursor = cursorOf(await readTrace(store, 'key-1', { payloads: false, limit: 1 }, NOW));
    const misshapen = await sign(store, 'trace', { invocationKey: 'key-1', payloads: 'yes', attempts: 'final' });

    await expect(readTrace(store, 'key-2', { after: cursor }, NOW)).rejects.toThrow(
      new InvalidInputError('invalid pagination cursor: it pages another invocation'),
    );
    await expect(readTrace(store, 'key-1', { after: cursor, payloads: true }, NOW)).rejects.toThrow(
      new InvalidInputError('the cursor pages with payloads=false; repeat that or leave payloads out'),
    );
    await expect(readTrace(store, 'key-1', { after: misshapen }, NOW)).rejects.toThrow(new InvalidInputError('invalid pagination cursor'));
    await expect(readTrace(memoryTraceStore('org_b'), 'key-1', { after: cursor }, NOW)).rejects.toThrow(
      new InvalidInputError('invalid pagination cursor'),
    );
  });

  it('inlines payloads, and answers 503 for one the span records but the bucket lacks', async () => {
    const store = storeWithTrace(0);
    store.spansOf.set('key-1', [span(1, 1, { input: 7, output: 7 })]);
    store.payloads.set('span-1-1/input', Buffer.from('{"a":1}'));

    const reading = readTrace(store, 'key-1', {}, NOW);

    await expect(reading).rejects.toThrow(new UnavailableError('the output payload of span span-1-1 could not be read; retry', 2));
    store.payloads.set('span-1-1/output', Buffer.from('{"b":2}'));
    const { spans } = await readTrace(store, 'key-1', {}, NOW);
    expect(spans[0]).toMatchObject({ input: { a: 1 }, input_bytes: 7, input_truncated: false, output: { b: 2 } });
  });

  it('answers 404 for an invocation the organization does not have', async () => {
    await expect(readTrace(memoryTraceStore(), 'key-9', {}, NOW)).rejects.toThrow(new NotFoundError('invocation key-9 not found'));
  });
});

describe('searching traces', () => {
  /** A store with `count` invocations of session-1, one a minute from midnight on. */
  function storeWithInvocations(count: number): MemoryTraceStore {
    const store = memoryTraceStore();
    store.sessions.set('session-1', { id: 'session-1', state: 'IDLE', invocation_count: count, message_count: 0, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' });
    for (let i = 0; i < count; i++) {
      store.invocations.set(`key-${i}`, invocation(`key-${i}`, { started_at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() }));
    }
    return store;
  }

  it('pages newest first with a cursor that keeps the window and filters', async () => {
    const store = storeWithInvocations(3);

    const first = await searchTraces(store, { session_id: 'session-1', limit: 2 }, NOW);
    const second = await searchTraces(store, { after: first.next_cursor, limit: 2 }, NOW);
    const repeated = await searchTraces(store, { after: first.next_cursor, session_id: 'session-1', limit: 2 }, NOW);

    expect(first.traces.map((t) => t.invocation_key)).toEqual(['key-2', 'key-1']);
    expect(second.traces.map((t) => t.invocation_key)).toEqual(['key-0']);
    expect(repeated).toEqual(second);
  });

  it('refuses a cursor with other filters and a signed one of another shape', async () => {
    const store = storeWithInvocations(3);
    const { next_cursor: cursor } = await searchTraces(store, { limit: 1 }, NOW);
    const misshapen = await sign(store, 'traces', { given: {}, window: { since: 1 }, position: {} });

    await expect(searchTraces(store, { after: cursor, status: 'FAILED', limit: 1 }, NOW)).rejects.toThrow(
      new InvalidInputError('the cursor pages other filters: send it with no filters or with every filter of the first page'),
    );
    await expect(searchTraces(store, { after: misshapen, limit: 1 }, NOW)).rejects.toThrow(new InvalidInputError('invalid pagination cursor'));
  });

  it('answers 404 for a session the organization does not have', async () => {
    await expect(searchTraces(memoryTraceStore(), { session_id: 'session-9', limit: 10 }, NOW)).rejects.toThrow(
      new NotFoundError('session session-9 not found'),
    );
  });
});
