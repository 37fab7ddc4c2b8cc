/**
 * The derivation of an invocation's events from its records (`core/events.ts`), against an
 * in-memory store: a read that sees a transaction half applied stops before it, a span cut
 * off with its attempt ends FAILED with it, expired spans leave only the outcome. No network.
 */
import { describe, expect, it } from 'vitest';
import { readEvents, type EventStore } from '#core/events';
import type { Attempt, Invocation, RecordedSpan } from '#core/model';

const T0 = '2026-11-01T00:00:00.000Z';
const T1 = '2026-11-01T00:00:01.000Z';
const T2 = '2026-11-01T00:00:02.000Z';

function world(invocation: Partial<Invocation> = {}) {
  const state = {
    invocation: { invocation_key: 'k', session_id: 's', session_position: 1, status: 'RUNNING', agent_name: 'a', agent_revision: 'r', body_sha256: 'x', started_at: new Date().toISOString(), user_cursor: 1, ...invocation } as Invocation,
    attempts: [] as Attempt[],
    spans: [] as RecordedSpan[],
  };
  const store: EventStore = {
    organizationId: 'org',
    cursorKey: async () => Buffer.from('key'),
    invocation: async () => structuredClone(state.invocation),
    attempts: async () => structuredClone(state.attempts),
    spansFrom: async (_key, attempt, seq, limit) => {
      const from = state.spans.filter((span) => span.attempt > attempt || (span.attempt === attempt && span.seq >= seq));
      return { spans: structuredClone(from.slice(0, limit)), more: from.length > limit };
    },
    message: async () => ({ cursor: 2, invocation_key: 'k', role: 'assistant', content: 'the answer', created_at: T2 }),
  };
  return { state, store };
}

const attempt = (number: number, status: Attempt['status'], extra: Partial<Attempt> = {}): Attempt =>
  ({ number, status, started_at: T0, usage: { input_tokens: 0, output_tokens: 0 }, steps: 0, ...extra });
const span = (seq: number, status: RecordedSpan['status'], extra: Partial<RecordedSpan> = {}): RecordedSpan =>
  ({ id: `inv-1.att-1.${seq}`, type: 'model_call', name: 'm', parent_id: null, attempt: 1, seq, status, started_at: T0, usage: null, ...extra });
const types = (page: { events: { type: string; seq: number }[] }) => page.events.map((event) => `${event.type}@${event.seq}`);

describe('readEvents', () => {
  it('stops before a span that runs while a later one has started (a half-applied read), and goes on once it is whole', async () => {
    const { state, store } = world();
    state.attempts = [attempt(1, 'RUNNING')];
    state.spans = [span(1, 'RUNNING'), span(2, 'RUNNING')];

    const half = await readEvents(store, 'k', { limit: 100, waitSeconds: 0 });
    expect(types(half)).toEqual(['attempt_started@1000000']);

    state.spans[0] = span(1, 'SUCCEEDED', { ended_at: T1, usage: { input_tokens: 1, output_tokens: 1 } });
    const whole = await readEvents(store, 'k', { after: half.next_cursor!, limit: 100, waitSeconds: 0 });
    expect(types(whole)).toEqual(['span_started@1000001', 'span_ended@1000002', 'span_started@1000003']);
    expect(whole.next_cursor).toEqual(expect.any(String));
  });

  it('ends a span cut off with its failed attempt, FAILED at the attempt end, and never with a succeeded one', async () => {
    const { state, store } = world({ status: 'FAILED', ended_at: T2, failure: { kind: 'no_progress', message: 'silent' } });
    state.attempts = [attempt(1, 'FAILED', { ended_at: T1, failure: { kind: 'no_progress', message: 'silent' } })];
    state.spans = [span(1, 'RUNNING')];

    const page = await readEvents(store, 'k', { limit: 100, waitSeconds: 0 });

    expect(types(page)).toEqual(['attempt_started@1000000', 'span_started@1000001', 'span_ended@1000002', 'attempt_ended@1999999', 'invocation_ended@11000000']);
    expect(page.events[2]).toMatchObject({ time: T1, span: { status: 'FAILED', ended_at: T1 } });
    expect(page.next_cursor).toBeUndefined();

    state.attempts = [attempt(1, 'SUCCEEDED', { ended_at: T1 })];
    const torn = await readEvents(store, 'k', { limit: 100, waitSeconds: 0 });
    expect(types(torn)).toEqual(['attempt_started@1000000']);
  });

  it('holds back the attempt end and the outcome while spans remain unread, and pages to the end', async () => {
    const { state, store } = world({ status: 'SUCCEEDED', ended_at: T2, answer_cursor: 2 });
    state.attempts = [attempt(1, 'SUCCEEDED', { ended_at: T2 })];
    state.spans = [1, 2, 3].map((seq) => span(seq, 'SUCCEEDED', { ended_at: T1 }));
    const seen: string[] = [];
    let after: string | undefined;
    do {
      const page = await readEvents(store, 'k', { ...(after ? { after } : {}), limit: 2, waitSeconds: 0 });
      seen.push(...types(page));
      after = page.next_cursor;
    } while (after);

    expect(seen).toEqual([
      'attempt_started@1000000', 'span_started@1000001', 'span_ended@1000002', 'span_started@1000003', 'span_ended@1000004',
      'span_started@1000005', 'span_ended@1000006', 'attempt_ended@1999999', 'invocation_ended@11000000',
    ]);
  });

  it('lists only the outcome once the spans have expired', async () => {
    const { state, store } = world({ status: 'SUCCEEDED', started_at: '2020-01-01T00:00:00.000Z', ended_at: '2020-01-01T00:00:05.000Z', answer_cursor: 2 });
    state.attempts = [attempt(1, 'SUCCEEDED')];

    const page = await readEvents(store, 'k', { limit: 100, waitSeconds: 0 });

    expect(page.events).toEqual([{ seq: 11_000_000, type: 'invocation_ended', time: '2020-01-01T00:00:05.000Z', status: 'SUCCEEDED', message: expect.objectContaining({ content: 'the answer' }) }]);
  });
});
