/** Agents as clients see them: a name, its current revision and its history. */
import { getAgent, getRevision, listRevisionDates, type Revision } from '#data/agents';
import { NotFoundError } from './errors';

export interface AgentDetail {
  name: string;
  current: Revision;
  revisions: Pick<Revision, 'revision' | 'created_at'>[];
}

type RevisionDate = Pick<Revision, 'revision' | 'created_at'>;

const newestFirst = (a: RevisionDate, b: RevisionDate) =>
  a.created_at === b.created_at ? (a.revision < b.revision ? 1 : -1) : a.created_at < b.created_at ? 1 : -1;

/** An agent name with its current revision and every revision, newest first; 404 when it never ran. */
export async function readAgent(organizationId: string, name: string): Promise<AgentDetail> {
  const agent = await getAgent(organizationId, name);
  if (!agent) throw new NotFoundError(`agent ${name} not found`);
  // Read after the name, consistently: a revision is written with (or before) the name that
  // points at it, so the current one is there. Only the current one's configuration is read.
  const [current, revisions] = await Promise.all([
    getRevision(organizationId, name, agent.current_revision, { consistent: true }),
    listRevisionDates(organizationId, name),
  ]);
  if (!current) throw new Error(`agent ${name} names revision ${agent.current_revision}, which is missing`);
  return { name, current, revisions: revisions.sort(newestFirst) };
}

/** One revision of an agent name with its configuration; 404 for an unknown name or revision. */
export async function readRevision(organizationId: string, name: string, revision: string): Promise<Revision> {
  const found = await getRevision(organizationId, name, revision);
  if (!found) throw new NotFoundError(`agent ${name} has no revision ${revision}`);
  return found;
}
