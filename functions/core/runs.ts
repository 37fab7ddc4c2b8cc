/**
 * Accepting a run: `POST /sessions/{id}` validated, turned into an invocation by one
 * transaction, or matched to the invocation its `Idempotency-Key` already names. The rules
 * live here; what they read and write is an `AcceptanceStore` of one organization
 * (`data/acceptance.ts` implements it over DynamoDB, the unit tests in memory).
 */
import { referencedSecrets, type AgentConfig } from '#contracts/agent';
import { config } from '#kit/config';
import { sha256 } from '#kit/ids';
import { METRIC } from '#kit/metric-names';
import { count } from '#kit/metrics';
import { ConflictError, InvalidInputError, LockedError, QuotaExceededError } from './errors';
import type { Invocation, Refusal, Session } from './model';
import { revisionOf } from './revision';

/** What accepting a run reads and writes, bound to one organization. */
export interface AcceptanceStore {
  /** The invocation a key names and the session, read together and consistently. */
  invocationAndSession(invocationKey: string, sessionId: string): Promise<{ invocation?: Invocation; session?: Session }>;
  invocation(invocationKey: string): Promise<Invocation | undefined>;
  /** Whether the organization holds a secret of this name. */
  hasSecret(name: string): Promise<boolean>;
  /**
   * In one step: the invocation's record (its key new), the session's lock (idle and
   * unchanged since `seen`, or new), the quota, the user message and the audit event; or why not.
   */
  accept(input: { invocation: Invocation; userPrompt: string; quota: number; seen: Session | undefined }): Promise<Refusal | undefined>;
  /** Records that a configuration ran under an agent name, as its revision. */
  recordRevision(agentName: string, revision: { revision: string; created_at: string; config: AgentConfig }): Promise<void>;
}

export interface RunRequest {
  organizationId: string;
  sessionId: string;
  invocationKey: string;
  /** The body exactly as sent: a retry re-attaches only with the same bytes. */
  rawBody: string;
  agentName: string;
  agent: AgentConfig;
  userPrompt: string;
}

export interface AcceptedRun {
  invocation: Invocation;
  /** False when the key named an invocation that already existed (a re-attach). */
  created: boolean;
}

// A session that keeps changing under us is as good as busy.
const ACCEPT_ROUNDS = 5;

function reattach(existing: Invocation, request: RunRequest, bodySha256: string): AcceptedRun {
  if (existing.session_id !== request.sessionId) {
    throw new ConflictError(`Idempotency-Key ${request.invocationKey} was already used on another session`);
  }
  if (existing.body_sha256 !== bodySha256) {
    throw new ConflictError('Idempotency-Key was already used with a different body; resend the original body or use a new key');
  }
  return { invocation: existing, created: false };
}

async function assertSecretsExist(store: AcceptanceStore, agent: AgentConfig): Promise<void> {
  for (const name of referencedSecrets(agent)) {
    if (!(await store.hasSecret(name))) {
      throw new InvalidInputError(`the agent configuration references secret ${name}, which the organization does not have`);
    }
  }
}

/** Accepts a run or re-attaches to the one its key names; 409, 423 and 429 as the spec says. */
export async function acceptRun(store: AcceptanceStore, request: RunRequest): Promise<AcceptedRun> {
  const { sessionId, invocationKey } = request;
  const bodySha256 = sha256(request.rawBody);
  const revision = revisionOf(request.agent);
  let checked = false;

  for (let round = 0; round < ACCEPT_ROUNDS; round++) {
    const { invocation: earlier, session } = await store.invocationAndSession(invocationKey, sessionId);
    if (earlier) return reattach(earlier, request, bodySha256);
    if (session?.state === 'RUNNING') {
      // The two items are read one by one: the session may show this very key's acceptance
      // committed after the invocation item was read.
      const running = session.current_invocation_key === invocationKey ? await store.invocation(invocationKey) : undefined;
      if (running) return reattach(running, request, bodySha256);
      throw new LockedError(`another invocation is running in session ${sessionId}`);
    }
    if (!checked) {
      await assertSecretsExist(store, request.agent);
      checked = true;
    }
    const invocation: Invocation = {
      invocation_key: invocationKey,
      session_id: sessionId,
      session_position: (session?.invocation_count ?? 0) + 1,
      status: 'RUNNING',
      agent_name: request.agentName,
      agent_revision: revision,
      body_sha256: bodySha256,
      started_at: new Date().toISOString(),
      user_cursor: (session?.message_count ?? 0) + 1,
      model: { provider: request.agent.model.provider.name, name: request.agent.model.name },
    };
    const refusal = await store.accept({ invocation, userPrompt: request.userPrompt, quota: config.invocationQuota, seen: session });
    if (!refusal) {
      count(METRIC.invocationsAccepted);
      return { invocation, created: true };
    }
    if (refusal.reason === 'key_in_use') return reattach(refusal.invocation, request, bodySha256);
    if (refusal.reason === 'quota_exhausted') throw new QuotaExceededError('the organization has used up its private-beta invocation quota');
  }
  throw new LockedError(`another invocation is running in session ${sessionId}`);
}

/** Records that the invocation's configuration ran under its agent name (its revision). */
export async function recordRunRevision(store: AcceptanceStore, request: Pick<RunRequest, 'agentName' | 'agent'>, invocation: Invocation): Promise<void> {
  await store.recordRevision(request.agentName, { revision: invocation.agent_revision, created_at: invocation.started_at, config: request.agent });
}
