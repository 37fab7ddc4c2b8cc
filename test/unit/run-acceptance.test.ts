/**
 * The rules of accepting a run (`core/runs.ts`), against an in-memory store: idempotency
 * (re-attach, 409), the session lock (423), the quota (429), secrets that must exist (400),
 * and the races between requests. No network: the whole file runs in milliseconds.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AgentConfig } from '#contracts/agent';
import { ConflictError, InvalidInputError, LockedError, QuotaExceededError } from '#core/errors';
import { acceptRun, recordRunRevision, type RunRequest } from '#core/runs';
import { sha256 } from '#kit/ids';
import { finish, memoryAcceptanceStore } from '../fakes/memory-acceptance-store';

const agent: AgentConfig = { model: { name: 'gpt-fake', provider: { name: 'openai' } } };
const request = (overrides: Partial<RunRequest> = {}): RunRequest => ({
  organizationId: 'org_a',
  sessionId: 'session-1',
  invocationKey: 'key-1',
  rawBody: '{"user_prompt":"hi"}',
  agentName: 'greeter',
  agent,
  userPrompt: 'hi',
  ...overrides,
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('accepting a run', () => {
  it('starts an invocation: the session locked with its key, the user message and the audit event written', async () => {
    const store = memoryAcceptanceStore();

    const { invocation, created } = await acceptRun(store, request());

    expect(created).toBe(true);
    expect(invocation).toMatchObject({ invocation_key: 'key-1', session_id: 'session-1', session_position: 1, user_cursor: 1, status: 'RUNNING', agent_name: 'greeter' });
    expect(invocation.body_sha256).toBe(sha256('{"user_prompt":"hi"}'));
    expect(invocation.agent_revision).toMatch(/^[0-9a-f]{16}$/);
    expect(store.sessions.get('session-1')).toMatchObject({ state: 'RUNNING', current_invocation_key: 'key-1', invocation_count: 1, message_count: 1 });
    expect(store.messages).toEqual([{ sessionId: 'session-1', cursor: 1, content: 'hi' }]);
    expect(store.audit.map((event) => event.type)).toEqual(['agent_invocation']);
  });

  it('re-attaches a request with the same key and the same bytes, starting nothing', async () => {
    const store = memoryAcceptanceStore();
    const first = await acceptRun(store, request());

    const again = await acceptRun(store, request());

    expect(again).toEqual({ invocation: first.invocation, created: false });
    expect(store.started).toBe(1);
  });

  it('answers 409 for the same key with another body, or on another session', async () => {
    const store = memoryAcceptanceStore();
    await acceptRun(store, request());

    await expect(acceptRun(store, request({ rawBody: '{"user_prompt":"other"}' }))).rejects.toBeInstanceOf(ConflictError);
    await expect(acceptRun(store, request({ sessionId: 'session-2' }))).rejects.toBeInstanceOf(ConflictError);
    expect(store.started).toBe(1);
  });

  it('answers 423 for a new key while the session runs, and accepts it once the run ended', async () => {
    const store = memoryAcceptanceStore();
    await acceptRun(store, request());

    await expect(acceptRun(store, request({ invocationKey: 'key-2' }))).rejects.toBeInstanceOf(LockedError);
    finish(store, 'session-1');
    const next = await acceptRun(store, request({ invocationKey: 'key-2' }));

    expect(next.invocation).toMatchObject({ session_position: 2, user_cursor: 3 });
  });

  it('re-attaches when the session already shows this key though the invocation was read before it was written', async () => {
    const store = memoryAcceptanceStore();
    const { invocation } = await acceptRun(store, request());
    // The batch read saw the session's lock but not yet the invocation item.
    const read = store.invocationAndSession.bind(store);
    store.invocationAndSession = async (key, sessionId) => ({ session: (await read(key, sessionId)).session! });

    await expect(acceptRun(store, request())).resolves.toEqual({ invocation, created: false });
  });

  it('answers 429 once the organization used up its quota, writing nothing', async () => {
    vi.stubEnv('INVOCATION_QUOTA', '1');
    const store = memoryAcceptanceStore();
    await acceptRun(store, request());
    finish(store, 'session-1');

    await expect(acceptRun(store, request({ invocationKey: 'key-2' }))).rejects.toBeInstanceOf(QuotaExceededError);
    expect(store.invocations.size).toBe(1);
    expect(store.messages).toHaveLength(1);
  });

  it('answers 400 for a secret the organization does not have, before writing anything', async () => {
    const store = memoryAcceptanceStore();
    const withSecret: AgentConfig = { model: { name: 'm', provider: { name: 'openai', credential: '{{secret:KEY}}' } } };

    await expect(acceptRun(store, request({ agent: withSecret }))).rejects.toBeInstanceOf(InvalidInputError);
    expect(store.invocations.size).toBe(0);
    store.secrets.add('KEY');
    await expect(acceptRun(store, request({ agent: withSecret }))).resolves.toMatchObject({ created: true });
  });

  it('answers 423 when the session keeps changing under every try', async () => {
    const store = memoryAcceptanceStore();
    await acceptRun(store, request());
    finish(store, 'session-1');
    let changes = 0;
    store.beforeAccept = () => {
      const session = store.sessions.get('session-1')!;
      store.sessions.set('session-1', { ...session, message_count: session.message_count + 1 });
      changes += 1;
    };

    await expect(acceptRun(store, request({ invocationKey: 'key-2' }))).rejects.toBeInstanceOf(LockedError);
    expect(changes).toBe(5);
    expect(store.started).toBe(1);
  });

  it('turns twenty identical requests at once into one invocation', async () => {
    const store = memoryAcceptanceStore();

    const results = await Promise.all(Array.from({ length: 20 }, () => acceptRun(store, request())));

    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(results.map((result) => result.invocation.invocation_key))).toEqual(new Set(['key-1']));
    expect(store.started).toBe(1);
  });

  it('runs exactly one of twenty keys sent at once on one session; the others get 423', async () => {
    const store = memoryAcceptanceStore();

    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => acceptRun(store, request({ invocationKey: `key-${i}` }))));

    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((result) => result.status === 'rejected').every((result) => (result as PromiseRejectedResult).reason instanceof LockedError)).toBe(true);
  });

  it('records the revision the invocation ran under its agent name', async () => {
    const store = memoryAcceptanceStore();
    const { invocation } = await acceptRun(store, request());

    await recordRunRevision(store, request(), invocation);

    expect(store.revisions.get(`greeter/${invocation.agent_revision}`)).toEqual({ revision: invocation.agent_revision, created_at: invocation.started_at, config: agent });
  });
});
