/**
 * What every `AttemptStore` must do, whatever stores it: one suite, run against the
 * DynamoDB store (test/integration/attempt-store.test.ts) and the in-memory one the
 * lifecycle's unit tests use (test/unit/attempt-store.test.ts), so the fake cannot drift
 * from the table.
 */
import { describe, expect, it } from 'vitest';
import type { AttemptStore } from '#core/attempts';
import type { Invocation } from '#core/model';

export interface AttemptStoreUnderTest {
  store: AttemptStore;
  /** A RUNNING invocation of the store's organization, holding its session's lock, with no attempt yet. */
  invocation: Invocation;
}

const usage = { input_tokens: 3, output_tokens: 2 };

/** Declares the suite; `make` gives a fresh store and running invocation for each test. */
export function attemptStoreContract(name: string, make: () => Promise<AttemptStoreUnderTest>): void {
  describe(`the attempt store (${name})`, { timeout: 30_000 }, () => {
    it('opens an attempt once: a second open of the same number says it exists', async () => {
      const { store, invocation } = await make();
      const key = invocation.invocation_key;

      expect(await store.openAttempt(invocation, 1, '2026-01-01T00:00:00.000Z')).toBe('opened');
      expect(await store.openAttempt(invocation, 1, '2026-01-01T00:00:01.000Z')).toBe('exists');
      expect(await store.attempts(key)).toEqual([
        expect.objectContaining({ number: 1, status: 'RUNNING', started_at: '2026-01-01T00:00:00.000Z', steps: 0, usage: { input_tokens: 0, output_tokens: 0 } }),
      ]);
    });

    it('ends a running attempt once, and lists attempts oldest first', async () => {
      const { store, invocation } = await make();
      const key = invocation.invocation_key;
      await store.openAttempt(invocation, 1, '2026-01-01T00:00:00.000Z');
      const failure = { kind: 'no_progress' as const, message: 'silent' };

      expect(await store.endAttempt(key, 1, { status: 'FAILED', failure, ended_at: '2026-01-01T00:01:00.000Z' })).toBe(true);
      expect(await store.endAttempt(key, 1, { status: 'SUCCEEDED', answer: 'late', ended_at: '2026-01-01T00:02:00.000Z' })).toBe(false);
      expect(await store.endAttempt(key, 7, { status: 'FAILED', failure, ended_at: '2026-01-01T00:02:00.000Z' })).toBe(false);
      await store.openAttempt(invocation, 2, '2026-01-01T00:03:00.000Z');

      const attempts = await store.attempts(key);
      expect(attempts.map((attempt) => [attempt.number, attempt.status])).toEqual([[1, 'FAILED'], [2, 'RUNNING']]);
      expect(attempts[0]).toMatchObject({ failure, ended_at: '2026-01-01T00:01:00.000Z' });
    });

    it('records a success once: the invocation ends with its answer cursor and the session is released', async () => {
      const { store, invocation } = await make();
      const key = invocation.invocation_key;
      const session = (await store.session(invocation.session_id))!;
      const outcome = { invocation, endedAt: '2026-01-01T00:05:00.000Z', answer: 'four', messageCount: session.message_count, usage };

      expect(await store.recordOutcome(outcome)).toBe(true);
      expect(await store.recordOutcome(outcome)).toBe(false);

      expect(await store.invocation(key)).toMatchObject({ status: 'SUCCEEDED', ended_at: '2026-01-01T00:05:00.000Z', answer_cursor: session.message_count + 1 });
      const released = (await store.session(invocation.session_id))!;
      expect(released).toMatchObject({ state: 'IDLE', message_count: session.message_count + 1 });
      expect(released.current_invocation_key).toBeUndefined();
    });

    it('records a failure with its kind; the session keeps its messages; no attempt opens afterwards', async () => {
      const { store, invocation } = await make();
      const key = invocation.invocation_key;
      const session = (await store.session(invocation.session_id))!;
      const failure = { kind: 'interrupted' as const, message: 'the session was deleted' };

      expect(await store.recordOutcome({ invocation, endedAt: '2026-01-01T00:05:00.000Z', failure, messageCount: session.message_count, usage })).toBe(true);

      expect(await store.invocation(key)).toMatchObject({ status: 'FAILED', failure });
      expect(await store.session(invocation.session_id)).toMatchObject({ state: 'IDLE', message_count: session.message_count });
      expect(await store.openAttempt(invocation, 1, '2026-01-01T00:06:00.000Z')).toBe('ended');
      expect(await store.attempts(key)).toEqual([]);
    });

    it('knows no invocation or session of another name', async () => {
      const { store } = await make();
      expect(await store.invocation('no-such-key')).toBeUndefined();
      expect(await store.session('no-such-session')).toBeUndefined();
      expect(await store.attempts('no-such-key')).toEqual([]);
    });
  });
}
