/**
 * Running, reading, listing and deleting sessions: what the /sessions routes do between
 * the HTTP kit and the data layer.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentConfig } from '#contracts/agent';
import { checkOutputFormat } from '#functions/agent/output-format';
import { isProviderAvailable } from '#functions/agent/providers/available';
import { attemptStore } from '#data/attempts';
import { listAuditEvents } from '#data/audit';
import { deleteInvocationRecords, deleteSessionRecords, getInvocation, getSession, listSessionInvocationKeys, listSessions } from '#data/invocations';
import type { Invocation, Session } from '#core/model';
import { getMessage, listMessages, type Message } from '#data/messages';
import { deleteInvocationObjects } from '#data/payloads';
import { startExecution, stopExecution } from '#data/workflow';
import { finishInvocation, interruptInvocation } from './attempts';
import { config } from '#kit/config';
import { sign, verify, type CursorScope } from './cursor';
import { cursorKey } from '#data/cursor-key';

const cursorScope = (organizationId: string): CursorScope => ({ organizationId, cursorKey });
import { InvalidInputError, NotFoundError } from './errors';
import { acceptRun, recordRunRevision, type AcceptanceStore, type RunRequest } from './runs';

/** A session as clients see it. */
export function sessionView(session: Session) {
  const { id, state, invocation_count, created_at, updated_at, current_invocation_key, agent_name, agent_revision } = session;
  return { id, state, invocation_count, created_at, updated_at, current_invocation_key, agent_name, agent_revision };
}

/**
 * Refuses configurations this deployment cannot run (a feature not offered yet, a Bedrock
 * model outside its catalogue), before anything is recorded: a configuration must never
 * be accepted and then fail or quietly run without a part of it.
 */
export function assertRunnable(agent: AgentConfig): void {
  const missing = [
    !isProviderAvailable(agent.model.provider.name) && `model provider ${agent.model.provider.name}`,
    // Locally the tool needs bubblewrap; `npm start` says so when it is missing.
    agent.tools?.terminal && !config.sandboxFunctionName && 'the terminal tool',
  ].filter(Boolean);
  if (missing.length) throw new InvalidInputError(`this deployment does not offer ${missing.join(', ')}`);
  checkOutputFormat(agent.output_format);
  const { name, provider } = agent.model;
  // The service's role may invoke exactly the catalogue's Bedrock models, nothing else.
  if (provider.name === 'bedrock' && !config.modelCatalogue.some((model) => model.provider === 'bedrock' && model.name === name)) {
    throw new InvalidInputError(`bedrock model ${name} is not in this deployment's catalogue (GET /models)`);
  }
}

export type RunAnswer =
  | { outcome: 'accepted' | 'timeout'; session: Session; invocation: Invocation }
  | { outcome: 'succeeded'; session: Session; invocation: Invocation; message: Message | undefined }
  | { outcome: 'failed'; session: Session; invocation: Invocation };

// Polling the invocation item, one small consistent read (1 read request unit) per poll:
// every 10 ms while a quick run may end, then every 40 ms, so an outcome is answered
// within 40 ms at most 25 reads per waiting second (plus 20 in the first 200 ms).
const QUICK_POLLS = 20;
const QUICK_POLL_MS = 10;
const POLL_MS = 40;

async function waitForOutcome(organizationId: string, invocationKey: string, waitMs: number): Promise<Invocation | undefined> {
  const deadline = Date.now() + waitMs;
  for (let poll = 0; ; poll++) {
    const polled = Date.now();
    const invocation = await getInvocation(organizationId, invocationKey);
    // Gone means its session was deleted meanwhile.
    if (!invocation || invocation.status !== 'RUNNING') return invocation;
    const left = deadline - Date.now();
    if (left <= 0) return invocation;
    // The grid is kept from the poll's start: a slow read does not stretch it.
    const interval = poll < QUICK_POLLS ? QUICK_POLL_MS : POLL_MS;
    await sleep(Math.min(Math.max(0, interval - (Date.now() - polled)), left));
  }
}

/** Accepts (or re-attaches to) a run, makes sure it executes, and waits for it as asked. */
export async function runSession(acceptance: AcceptanceStore, request: RunRequest, waitSeconds: number): Promise<RunAnswer> {
  assertRunnable(request.agent);
  const { organizationId, invocationKey } = request;
  const { invocation } = await acceptRun(acceptance, request);
  if (invocation.status === 'RUNNING') {
    // A re-attach starts it too: the first request may have died between accepting and starting.
    try {
      // Before the execution: its first slice reads the configuration from the revision.
      await recordRunRevision(acceptance, request, invocation);
      await startExecution(organizationId, invocation);
    } catch (error) {
      await finishInvocation(attemptStore(organizationId), invocationKey, { Error: error instanceof Error ? error.name : 'Error' });
      throw error;
    }
  }
  const slice = config.waitSliceSeconds ?? Infinity;
  const current = waitSeconds > 0 ? await waitForOutcome(organizationId, invocationKey, Math.min(waitSeconds, slice) * 1000) : invocation;
  const [session, message] = await Promise.all([
    getSession(organizationId, request.sessionId),
    current?.status === 'SUCCEEDED' && current.answer_cursor ? getMessage(organizationId, request.sessionId, current.answer_cursor) : undefined,
  ]);
  if (!current || !session) throw new NotFoundError(`session ${request.sessionId} was deleted while its run was waited for`);
  if (current.status === 'SUCCEEDED') return { outcome: 'succeeded', session, invocation: current, message };
  if (current.status === 'FAILED') return { outcome: 'failed', session, invocation: current };
  return { outcome: waitSeconds === 0 ? 'accepted' : 'timeout', session, invocation: current };
}

/** A session and a page of its messages. */
export async function readSession(organizationId: string, sessionId: string, after: number, limit: number) {
  const session = await getSession(organizationId, sessionId);
  if (!session) throw new NotFoundError(`session ${sessionId} not found`);
  const { messages, more } = await listMessages(organizationId, sessionId, after, limit);
  const last = messages.at(-1);
  return {
    session: sessionView(session),
    messages,
    ...(more && last ? { next_cursor: String(last.cursor) } : {}),
  };
}

/** A page of the organization's sessions, newest `updated_at` first. */
export async function readSessions(organizationId: string, after: string | undefined, limit: number) {
  const position = after ? await verify(cursorScope(organizationId), 'sessions', after) : undefined;
  const { sessions, next } = await listSessions(
    organizationId,
    limit,
    position && { listed: String(position.listed), id: String(position.id) },
  );
  return {
    sessions: sessions.map(sessionView),
    ...(next ? { next_cursor: await sign(cursorScope(organizationId), 'sessions', { ...next }) } : {}),
  };
}

/** A page of a session's audit log in event time order; its cursors are bound to the session too. */
export async function readAudit(organizationId: string, sessionId: string, after: string | undefined, limit: number) {
  const position = after ? await verify(cursorScope(organizationId), 'audit', after) : undefined;
  if (position && position.sessionId !== sessionId) throw new InvalidInputError('invalid pagination cursor');
  if (!(await getSession(organizationId, sessionId))) throw new NotFoundError(`session ${sessionId} not found`);
  const { events, nextSk } = await listAuditEvents(organizationId, sessionId, position && String(position.sk), limit);
  return {
    events,
    ...(nextSk ? { next_cursor: await sign(cursorScope(organizationId), 'audit', { sessionId, sk: nextSk }) } : {}),
  };
}

const DELETED = 'the session was deleted';

/**
 * Ends a running invocation because its session is being deleted: records it FAILED
 * (interrupted), then stops its execution. Every later task of the execution finds it
 * ended (or gone) and does nothing; the outcome's session update needs the session's
 * lock, so nothing recreates the session.
 */
async function interrupt(organizationId: string, invocationKey: string): Promise<void> {
  const invocation = await getInvocation(organizationId, invocationKey);
  if (invocation?.status !== 'RUNNING') return;
  await interruptInvocation(attemptStore(organizationId), invocationKey, DELETED);
  await stopExecution(organizationId, invocation, DELETED);
}

/**
 * Deletes a session with its messages, audit log, invocations (attempts, spans) and their
 * payloads and checkpoints. The session item goes last, so a delete that fails midway can
 * be repeated. Its invocation keys are free again afterwards.
 */
export async function deleteSession(organizationId: string, sessionId: string): Promise<void> {
  const session = await getSession(organizationId, sessionId);
  if (!session) throw new NotFoundError(`session ${sessionId} not found`);
  if (session.current_invocation_key) await interrupt(organizationId, session.current_invocation_key);
  for (const invocationKey of await listSessionInvocationKeys(organizationId, sessionId)) {
    await deleteInvocationObjects(organizationId, invocationKey);
    await deleteInvocationRecords(organizationId, invocationKey);
  }
  await deleteSessionRecords(organizationId, sessionId);
}
