/**
 * An in-memory `AcceptanceStore` of one organization for the fast tests of the run path's
 * rules: every method yields to the event loop first (so concurrent requests interleave as
 * they do against a table), and `accept` checks the same conditions as the DynamoDB
 * transaction, all or nothing.
 */
import type { AgentConfig } from '#contracts/agent';
import type { Invocation, Refusal, Session } from '#core/model';
import type { AcceptanceStore } from '#core/runs';

export interface MemoryAcceptanceStore extends AcceptanceStore {
  invocations: Map<string, Invocation>;
  sessions: Map<string, Session>;
  secrets: Set<string>;
  /** Invocations the organization has started (the quota counter). */
  started: number;
  messages: { sessionId: string; cursor: number; content: string }[];
  audit: { sessionId: string; invocationKey: string; type: string }[];
  revisions: Map<string, { revision: string; created_at: string; config: AgentConfig }>;
  /** Called inside `accept` before its checks: a test's way to change the world between read and write. */
  beforeAccept?: () => void;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function memoryAcceptanceStore(): MemoryAcceptanceStore {
  const store: MemoryAcceptanceStore = {
    invocations: new Map(),
    sessions: new Map(),
    secrets: new Set(),
    started: 0,
    messages: [],
    audit: [],
    revisions: new Map(),
    async invocationAndSession(invocationKey, sessionId) {
      await turn();
      const invocation = store.invocations.get(invocationKey);
      const session = store.sessions.get(sessionId);
      return { ...(invocation ? { invocation: { ...invocation } } : {}), ...(session ? { session: { ...session } } : {}) };
    },
    async invocation(invocationKey) {
      await turn();
      const invocation = store.invocations.get(invocationKey);
      return invocation && { ...invocation };
    },
    async hasSecret(name) {
      await turn();
      return store.secrets.has(name);
    },
    async accept({ invocation, userPrompt, quota, seen }): Promise<Refusal | undefined> {
      await turn();
      store.beforeAccept?.();
      const existing = store.invocations.get(invocation.invocation_key);
      if (existing) return { reason: 'key_in_use', invocation: { ...existing } };
      const session = store.sessions.get(invocation.session_id);
      const unchanged = seen
        ? session?.state === 'IDLE' && session.invocation_count === seen.invocation_count && session.message_count === seen.message_count
        : session === undefined;
      if (!unchanged) return { reason: 'session_changed' };
      if (store.started >= quota) return { reason: 'quota_exhausted' };
      const now = invocation.started_at;
      store.invocations.set(invocation.invocation_key, { ...invocation });
      store.sessions.set(invocation.session_id, {
        id: invocation.session_id,
        state: 'RUNNING',
        invocation_count: invocation.session_position,
        message_count: invocation.user_cursor,
        created_at: session?.created_at ?? now,
        updated_at: now,
        current_invocation_key: invocation.invocation_key,
        agent_name: invocation.agent_name,
        agent_revision: invocation.agent_revision,
      });
      store.started += 1;
      store.messages.push({ sessionId: invocation.session_id, cursor: invocation.user_cursor, content: userPrompt });
      store.audit.push({ sessionId: invocation.session_id, invocationKey: invocation.invocation_key, type: 'agent_invocation' });
      return undefined;
    },
    async recordRevision(agentName, revision) {
      await turn();
      store.revisions.set(`${agentName}/${revision.revision}`, revision);
    },
  };
  return store;
}

/** Ends a session's running invocation as the outcome transaction would: the session is idle again. */
export function finish(store: MemoryAcceptanceStore, sessionId: string, status: 'SUCCEEDED' | 'FAILED' = 'SUCCEEDED'): void {
  const session = store.sessions.get(sessionId)!;
  const invocation = store.invocations.get(session.current_invocation_key!)!;
  store.invocations.set(invocation.invocation_key, { ...invocation, status, ended_at: new Date().toISOString() });
  const { current_invocation_key: _ended, ...rest } = session;
  store.sessions.set(sessionId, { ...rest, state: 'IDLE', message_count: session.message_count + (status === 'SUCCEEDED' ? 1 : 0) });
}
