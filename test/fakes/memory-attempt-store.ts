/**
 * An in-memory `AttemptStore` of one organization for the fast tests of the attempt
 * lifecycle's rules: the same conditions as the table (attempts open only while the
 * invocation runs, end only while running; the outcome is recorded once, releasing the
 * session), and what each outcome wrote, to assert on.
 */
import type { Attempt, Invocation, Session } from '#core/model';
import type { AttemptStore } from '#core/attempts';
import type { DeliveryOrder } from '#core/deliveries';
import type { Webhook } from '#core/webhooks';

export interface MemoryAttemptStore extends AttemptStore {
  invocations: Map<string, Invocation>;
  sessions: Map<string, Session>;
  attemptsOf: Map<string, Attempt[]>;
  audit: { invocationKey: string; type: 'run_succeeded' | 'run_failed' }[];
  messages: { sessionId: string; cursor: number; content: string }[];
  /** The organization's webhooks, as announcing an outcome reads them (none unless a test adds some). */
  webhooks: Webhook[];
  /** Every delivery an announcement started, by execution name. */
  started: { name: string; order: DeliveryOrder }[];
}

const copy = <T>(value: T): T => structuredClone(value);

/** A store holding one RUNNING invocation (`key-1`) of a locked session (`session-1`). */
export function memoryAttemptStore(): MemoryAttemptStore {
  const startedAt = new Date().toISOString();
  const store: MemoryAttemptStore = {
    invocations: new Map([
      ['key-1', { invocation_key: 'key-1', session_id: 'session-1', session_position: 1, status: 'RUNNING', agent_name: 'a', agent_revision: '0123456789abcdef', body_sha256: 'x', started_at: startedAt, user_cursor: 1 }],
    ]),
    sessions: new Map([
      ['session-1', { id: 'session-1', state: 'RUNNING', invocation_count: 1, message_count: 1, created_at: startedAt, updated_at: startedAt, current_invocation_key: 'key-1' }],
    ]),
    attemptsOf: new Map(),
    audit: [],
    messages: [],
    webhooks: [],
    started: [],
    deliveries: {
      targets: async () => ({ webhooks: copy(store.webhooks), otlp: false }),
      async start(order, name) {
        if (!store.started.some((start) => start.name === name)) store.started.push({ name, order: copy(order) });
      },
    },
    async invocation(key) {
      const invocation = store.invocations.get(key);
      return invocation && copy(invocation);
    },
    async session(id) {
      const session = store.sessions.get(id);
      return session && copy(session);
    },
    async attempts(key) {
      return copy(store.attemptsOf.get(key) ?? []);
    },
    async openAttempt(invocation, number, startedAt) {
      if (store.invocations.get(invocation.invocation_key)?.status !== 'RUNNING') return 'ended';
      const attempts = store.attemptsOf.get(invocation.invocation_key) ?? [];
      if (attempts.some((attempt) => attempt.number === number)) return 'exists';
      attempts.push({ number, status: 'RUNNING', started_at: startedAt, usage: { input_tokens: 0, output_tokens: 0 }, steps: 0 });
      store.attemptsOf.set(invocation.invocation_key, attempts);
      return 'opened';
    },
    async endAttempt(key, number, outcome) {
      const attempt = store.attemptsOf.get(key)?.find((candidate) => candidate.number === number);
      if (attempt?.status !== 'RUNNING') return false;
      Object.assign(attempt, outcome);
      return true;
    },
    async recordOutcome(outcome) {
      const key = outcome.invocation.invocation_key;
      const invocation = store.invocations.get(key);
      if (invocation?.status !== 'RUNNING') return false;
      const session = store.sessions.get(invocation.session_id)!;
      const answerCursor = outcome.messageCount + 1;
      store.invocations.set(key, {
        ...invocation,
        status: outcome.failure ? 'FAILED' : 'SUCCEEDED',
        ended_at: outcome.endedAt,
        usage: outcome.usage,
        ...(outcome.failure ? { failure: outcome.failure } : { answer_cursor: answerCursor }),
        ...(outcome.cancelled ? { cancelled: true as const } : {}),
      });
      const { current_invocation_key: _released, ...rest } = session;
      store.sessions.set(invocation.session_id, { ...rest, state: 'IDLE', message_count: outcome.failure ? outcome.messageCount : answerCursor });
      if (!outcome.failure) store.messages.push({ sessionId: invocation.session_id, cursor: answerCursor, content: outcome.answer ?? '' });
      store.audit.push({ invocationKey: key, type: outcome.failure ? 'run_failed' : 'run_succeeded' });
      return true;
    },
  };
  return store;
}
