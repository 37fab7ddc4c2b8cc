/**
 * Reading agents (`core/agents.ts`) against an in-memory store: an agent's current revision
 * and its history newest first, and the answers for what does not exist. No network.
 */
import { describe, expect, it } from 'vitest';
import type { AgentConfig } from '#contracts/agent';
import { readAgent, readRevision } from '#core/agents';
import { NotFoundError } from '#core/errors';
import { memoryAgentStore, type MemoryAgentStore } from '../fakes/memory-agent-store';

const config = (prompt: string): AgentConfig => ({ model: { name: 'gpt-fake', provider: { name: 'openai' } }, system_prompt: prompt });

/** `helper` with revisions a (oldest), b and c (the same instant as b), its latest run on a. */
function helper(): MemoryAgentStore {
  const store = memoryAgentStore();
  store.agents.set('helper', { name: 'helper', revision_count: 3, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-03T00:00:00.000Z', current_revision: 'aaaaaaaaaaaaaaaa' });
  store.revisions.set('helper/aaaaaaaaaaaaaaaa', { revision: 'aaaaaaaaaaaaaaaa', created_at: '2026-01-01T00:00:00.000Z', config: config('a') });
  store.revisions.set('helper/bbbbbbbbbbbbbbbb', { revision: 'bbbbbbbbbbbbbbbb', created_at: '2026-01-02T00:00:00.000Z', config: config('b') });
  store.revisions.set('helper/cccccccccccccccc', { revision: 'cccccccccccccccc', created_at: '2026-01-02T00:00:00.000Z', config: config('c') });
  return store;
}

describe('reading agents', () => {
  it('answers the current revision with its configuration and every revision newest first', async () => {
    const store = helper();

    const detail = await readAgent(store, 'helper');

    expect(detail.current).toEqual({ revision: 'aaaaaaaaaaaaaaaa', created_at: '2026-01-01T00:00:00.000Z', config: config('a') });
    // Revisions of the same instant go by id, descending.
    expect(detail.revisions.map((r) => r.revision)).toEqual(['cccccccccccccccc', 'bbbbbbbbbbbbbbbb', 'aaaaaaaaaaaaaaaa']);
  });

  it('answers one revision, and 404 for an unknown name or revision', async () => {
    const store = helper();

    const revision = await readRevision(store, 'helper', 'bbbbbbbbbbbbbbbb');

    expect(revision.config).toEqual(config('b'));
    await expect(readAgent(store, 'other')).rejects.toThrow(new NotFoundError('agent other not found'));
    await expect(readRevision(store, 'helper', 'dddddddddddddddd')).rejects.toThrow(new NotFoundError('agent helper has no revision dddddddddddddddd'));
  });

  it('fails loudly when a name points at a revision that is missing', async () => {
    const store = helper();
    store.revisions.delete('helper/aaaaaaaaaaaaaaaa');

    await expect(readAgent(store, 'helper')).rejects.toThrow('agent helper names revision aaaaaaaaaaaaaaaa, which is missing');
  });
});
