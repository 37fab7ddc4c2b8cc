/**
 * An in-memory `TraceStore` of one organization for the fast tests of reading traces:
 * invocations, attempts and spans (each span's sort key is its index, zero-padded), span
 * payloads by `<span id>/<part>`, and a search that pages newest first by position.
 */
import type { Attempt, Invocation, Session } from '#core/model';
import type { StoredSpan, TraceStore } from '#core/traces';

export interface MemoryTraceStore extends TraceStore {
  invocations: Map<string, Invocation>;
  sessions: Map<string, Session>;
  attemptsOf: Map<string, Attempt[]>;
  spansOf: Map<string, StoredSpan[]>;
  payloads: Map<string, Uint8Array>;
}

const copy = <T>(value: T): T => structuredClone(value);

/** An empty store of organization `org_a`, its cursors signed with a fixed key. */
export function memoryTraceStore(organizationId = 'org_a'): MemoryTraceStore {
  const store: MemoryTraceStore = {
    organizationId,
    cursorKey: async () => Buffer.from('memory-trace-store-key'),
    invocations: new Map(),
    sessions: new Map(),
    attemptsOf: new Map(),
    spansOf: new Map(),
    payloads: new Map(),
    async invocation(invocationKey) {
      const invocation = store.invocations.get(invocationKey);
      return invocation && copy(invocation);
    },
    async session(sessionId) {
      const session = store.sessions.get(sessionId);
      return session && copy(session);
    },
    async attempts(invocationKey) {
      return copy(store.attemptsOf.get(invocationKey) ?? []);
    },
    async spans(invocationKey, attempt, afterSk, limit) {
      const matching = (store.spansOf.get(invocationKey) ?? [])
        .filter((span) => (attempt === undefined || span.attempt === attempt) && (afterSk === undefined || span.sk > afterSk));
      return { spans: copy(matching.slice(0, limit)), more: matching.length > limit };
    },
    async span(invocationKey, attempt, seq) {
      const found = (store.spansOf.get(invocationKey) ?? []).find((span) => span.attempt === attempt && span.id.endsWith(`.att-${attempt}.${seq}`));
      return found && copy(found);
    },
    async payload(_invocationKey, spanId, part, firstBytes) {
      const bytes = store.payloads.get(`${spanId}/${part}`);
      return bytes && bytes.slice(0, firstBytes);
    },
    async search(filters, window, limit, after) {
      const matching = [...store.invocations.values()]
        .filter((invocation) => invocation.started_at >= window.since && invocation.started_at <= window.until)
        .filter((invocation) => Object.entries(filters).every(([name, value]) => value === undefined || invocation[name as keyof typeof filters] === value))
        .sort((a, b) => (a.started_at < b.started_at ? 1 : -1))
        .filter((invocation) => after === undefined || invocation.started_at < after.started_at!);
      const page = matching.slice(0, limit);
      const last = page.at(-1);
      return { invocations: copy(page), ...(matching.length > limit && last ? { next: { started_at: last.started_at } } : {}) };
    },
  };
  return store;
}

/** A span of attempt `attempt` numbered `seq`, ended, with payload descriptors when `bytes` are given. */
export function span(attempt: number, seq: number, bytes?: { input: number; output: number }): StoredSpan {
  return {
    id: `span-${attempt}-${seq}`,
    type: 'model_call',
    name: 'gpt-fake',
    parent_id: null,
    attempt,
    status: 'SUCCEEDED',
    started_at: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
    ended_at: new Date(Date.UTC(2026, 0, 1, 0, 0, seq + 1)).toISOString(),
    usage: { input_tokens: 1, output_tokens: 1 },
    ...(bytes ? { input_bytes: bytes.input, input_sha256: 'in', output_bytes: bytes.output, output_sha256: 'out' } : {}),
    sk: `${String(attempt).padStart(3, '0')}#${String(seq).padStart(6, '0')}`,
  };
}
