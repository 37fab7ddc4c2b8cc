/** What a slice of an attempt reads and writes, for one organization (`core/run-attempt.ts` declares the store). */
import type { SliceStore } from '#core/run-attempt';
import { getRevision } from './agents';
import { attemptStore } from './attempts';
import { memoryGroupStore } from './memories';
import { listMessages } from './messages';
import { checkpointKey, getJson, putJson, workspaceSnapshotUrls } from './payloads';
import { readSecretValue } from './secret-values';
import { spanStore } from './spans';

/** The slice store of `organizationId`. */
export function sliceStore(organizationId: string): SliceStore {
  return {
    attempts: attemptStore(organizationId),
    agentConfig: async (agentName, revision) => (await getRevision(organizationId, agentName, revision))?.config,
    messages: async (sessionId, count) => (await listMessages(organizationId, sessionId, 0, count)).messages,
    secretValue: (name) => readSecretValue(organizationId, name),
    checkpoint: (invocationKey, attempt) => getJson(checkpointKey(organizationId, invocationKey, attempt)),
    saveCheckpoint: (invocationKey, attempt, state) => putJson(checkpointKey(organizationId, invocationKey, attempt), state),
    recorder: (invocation, attempt, options) => spanStore(organizationId, invocation, attempt, options),
    memoryGroup: (group, invocation) => memoryGroupStore(organizationId, group, invocation),
    workspaceSnapshotUrls: (invocationKey, seconds) => workspaceSnapshotUrls(organizationId, invocationKey, seconds),
  };
}
