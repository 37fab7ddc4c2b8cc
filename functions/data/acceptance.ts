/** The acceptance store of one organization over the table (`core/runs.ts` declares it). */
import type { AcceptanceStore } from '#core/runs';
import { recordRevision } from './agents';
import { acceptInvocation, getInvocation, getInvocationAndSession } from './invocations';
import { getSecretMetadata } from './secrets';

/** What accepting a run of `organizationId` reads and writes. */
export function acceptanceStore(organizationId: string): AcceptanceStore {
  return {
    invocationAndSession: (invocationKey, sessionId) => getInvocationAndSession(organizationId, invocationKey, sessionId),
    invocation: (invocationKey) => getInvocation(organizationId, invocationKey),
    hasSecret: async (name) => (await getSecretMetadata(organizationId, name)) !== undefined,
    accept: (input) => acceptInvocation({ organizationId, ...input }),
    recordRevision: (agentName, revision) => recordRevision(organizationId, agentName, revision),
  };
}
