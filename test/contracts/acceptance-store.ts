/**
 * What every `AcceptanceStore` must do, whatever stores it: one suite, run against the
 * DynamoDB store (test/integration/acceptance-store.test.ts) and the in-memory one the
 * rules' unit tests use (test/unit/acceptance-store.test.ts), so the fake cannot drift
 * from the table.
 */
import { describe, expect, it } from 'vitest';
import type { Invocation } from '#core/model';
import type { AcceptanceStore } from '#core/runs';

export interface AcceptanceStoreUnderTest {
  store: AcceptanceStore;
  /** Gives the store's organization a secret of this name. */
  addSecret(name: string): Promise<void>;
}

let sequence = 0;

function invocation(overrides: Partial<Invocation> = {}): Invocation {
  sequence += 1;
  return {
    invocation_key: `contract-key-${sequence}`,
    session_id: `contract-session-${sequence}`,
    session_position: 1,
    status: 'RUNNING',
    agent_name: 'contract',
    agent_revision: '0123456789abcdef',
    body_sha256: 'a'.repeat(64),
    started_at: new Date().toISOString(),
    user_cursor: 1,
    ...overrides,
  };
}

/** Declares the suite; `make` gives a fresh store of a fresh organization for each test. */
export function acceptanceStoreContract(name: string, make: () => Promise<AcceptanceStoreUnderTest>): void {
  describe(`the acceptance store (${name})`, { timeout: 30_000 }, () => {
    it('accepts a new key on a new session: both read back, the session locked by it', async () => {
      const { store } = await make();
      const accepted = invocation();

      expect(await store.accept({ invocation: accepted, userPrompt: 'hi', quota: 10, seen: undefined })).toBeUndefined();

      const read = await store.invocationAndSession(accepted.invocation_key, accepted.session_id);
      expect(read.invocation).toMatchObject({ invocation_key: accepted.invocation_key, status: 'RUNNING', session_position: 1, user_cursor: 1 });
      expect(read.session).toMatchObject({ id: accepted.session_id, state: 'RUNNING', current_invocation_key: accepted.invocation_key, invocation_count: 1, message_count: 1 });
      expect(await store.invocation(accepted.invocation_key)).toMatchObject({ invocation_key: accepted.invocation_key });
    });

    it('answers nothing for a key and a session it does not hold', async () => {
      const { store } = await make();

      expect(await store.invocationAndSession('contract-unknown', 'contract-unknown')).toEqual({});
      expect(await store.invocation('contract-unknown')).toBeUndefined();
    });

    it('refuses a key in use, naming the invocation that holds it', async () => {
      const { store } = await make();
      const first = invocation();
      await store.accept({ invocation: first, userPrompt: 'hi', quota: 10, seen: undefined });

      const refusal = await store.accept({ invocation: { ...first, session_id: 'contract-elsewhere' }, userPrompt: 'hi', quota: 10, seen: undefined });

      expect(refusal).toMatchObject({ reason: 'key_in_use', invocation: { invocation_key: first.invocation_key, session_id: first.session_id } });
    });

    it('refuses a session that is not as it was seen: running, or changed', async () => {
      const { store } = await make();
      const first = invocation();
      await store.accept({ invocation: first, userPrompt: 'hi', quota: 10, seen: undefined });
      const { session } = await store.invocationAndSession(first.invocation_key, first.session_id);

      const onRunning = await store.accept({ invocation: invocation({ session_id: first.session_id, session_position: 2, user_cursor: 2 }), userPrompt: 'again', quota: 10, seen: session });
      const onNewSeenAsMissing = await store.accept({ invocation: invocation({ session_id: first.session_id }), userPrompt: 'again', quota: 10, seen: undefined });

      expect(onRunning).toEqual({ reason: 'session_changed' });
      expect(onNewSeenAsMissing).toEqual({ reason: 'session_changed' });
    });

    it('refuses once the organization started as many invocations as its quota', async () => {
      const { store } = await make();
      await store.accept({ invocation: invocation(), userPrompt: 'hi', quota: 1, seen: undefined });

      expect(await store.accept({ invocation: invocation(), userPrompt: 'hi', quota: 1, seen: undefined })).toEqual({ reason: 'quota_exhausted' });
    });

    it('knows the secrets of its organization by name', async () => {
      const { store, addSecret } = await make();

      expect(await store.hasSecret('CONTRACT_SECRET')).toBe(false);
      await addSecret('CONTRACT_SECRET');
      expect(await store.hasSecret('CONTRACT_SECRET')).toBe(true);
    });

    it('records a revision, and records it again without complaint', async () => {
      const { store } = await make();
      const revision = { revision: '0123456789abcdef', created_at: new Date().toISOString(), config: { model: { name: 'm', provider: { name: 'openai' as const } } } };

      await store.recordRevision('contract', revision);
      await expect(store.recordRevision('contract', revision)).resolves.toBeUndefined();
    });
  });
}
