/**
 * An in-memory `AgentStore` of one organization for the fast tests of reading agents:
 * agent names and their revisions, as `recordRevision` would have left them.
 */
import type { Agent, AgentStore, Revision } from '#core/agents';

export interface MemoryAgentStore extends AgentStore {
  agents: Map<string, Agent>;
  /** Revisions by `<name>/<revision>`. */
  revisions: Map<string, Revision>;
}

const copy = <T>(value: T): T => structuredClone(value);

export function memoryAgentStore(): MemoryAgentStore {
  const store: MemoryAgentStore = {
    agents: new Map(),
    revisions: new Map(),
    async list() {
      return [...store.agents.values()]
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map(({ current_revision: _current, ...summary }) => summary);
    },
    async agent(name) {
      const agent = store.agents.get(name);
      return agent && copy(agent);
    },
    async revision(name, revision) {
      const found = store.revisions.get(`${name}/${revision}`);
      return found && copy(found);
    },
    async revisionDates(name) {
      return [...store.revisions.entries()]
        .filter(([key]) => key.startsWith(`${name}/`))
        .map(([, { revision, created_at }]) => ({ revision, created_at }));
    },
  };
  return store;
}
