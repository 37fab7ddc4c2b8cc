/** Agents as clients see them: a name, its current revision and its history. */
import type { AgentConfig } from '#contracts/agent';
import { NotFoundError } from './errors';

/** One distinct configuration that ran under a name; `created_at` is its first run. */
export interface Revision {
  revision: string;
  created_at: string;
  config: AgentConfig;
}

/** A revision without its configuration (which can be large). */
export type RevisionDate = Pick<Revision, 'revision' | 'created_at'>;

/** An agent name as the list shows it. */
export interface AgentSummary {
  name: string;
  revision_count: number;
  created_at: string;
  updated_at: string;
}

/** An agent name with the revision its latest run used. */
export interface Agent extends AgentSummary {
  current_revision: string;
}

export interface AgentDetail {
  name: string;
  current: Revision;
  revisions: RevisionDate[];
}

/** The agent names of one organization and their revisions. */
export interface AgentStore {
  /** Every agent name, in code point order of the name. */
  list(): Promise<AgentSummary[]>;
  /** One agent name with its current revision, read consistently. */
  agent(name: string): Promise<Agent | undefined>;
  /** One revision with its configuration; `consistent` reads what was written just before. */
  revision(name: string, revision: string, options?: { consistent?: boolean }): Promise<Revision | undefined>;
  /** Every revision of a name, without configurations, read consistently, in no useful order. */
  revisionDates(name: string): Promise<RevisionDate[]>;
}

const newestFirst = (a: RevisionDate, b: RevisionDate) =>
  a.created_at === b.created_at ? (a.revision < b.revision ? 1 : -1) : a.created_at < b.created_at ? 1 : -1;

/** An agent name with its current revision and every revision, newest first; 404 when it never ran. */
export async function readAgent(store: AgentStore, name: string): Promise<AgentDetail> {
  const agent = await store.agent(name);
  if (!agent) throw new NotFoundError(`agent ${name} not found`);
  // Read after the name, consistently: a revision is written with (or before) the name that
  // points at it, so the current one is there. Only the current one's configuration is read.
  const [current, revisions] = await Promise.all([
    store.revision(name, agent.current_revision, { consistent: true }),
    store.revisionDates(name),
  ]);
  if (!current) throw new Error(`agent ${name} names revision ${agent.current_revision}, which is missing`);
  return { name, current, revisions: revisions.sort(newestFirst) };
}

/** One revision of an agent name with its configuration; 404 for an unknown name or revision. */
export async function readRevision(store: AgentStore, name: string, revision: string): Promise<Revision> {
  const found = await store.revision(name, revision);
  if (!found) throw new NotFoundError(`agent ${name} has no revision ${revision}`);
  return found;
}
