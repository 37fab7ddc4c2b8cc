/**
 * Running, reading, listing and deleting sessions: what the /sessions routes do. What they
 * read and write is a `SessionStore` of one organization; runs execute on a `RunEngine`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentConfig } from '#contracts/agent';
import { checkOutputFormat } from '#functions/agent/output-format';
import { isProviderAvailable } from '#functions/agent/providers/available';
import { config } from '#kit/config';
import type { AuditEvent, Invocation, Message, Session } from './model';
import { finishInvocation, interruptInvocation, type AttemptStore } from './attempts';
import { sign, verify, type CursorScope } from './cursor';
import { InvalidInputError, NotFoundError } from './errors';
import { acceptRun, recordRunRevision, type AcceptanceStore, type RunRequest } from './runs';

/** Where a page of the sessions list starts: the listing sort key of the last session seen. */
export interface SessionsPosition {
  listed: string;
  id: string;
}

/** The sessions of one organization with their messages and audit logs. */
export interface SessionStore extends CursorScope {
  /** A session, read consistently. */
  session(sessionId: string): Promise<Session | undefined>;
  /** Up to `limit` sessions, newest `updated_at` first, and where the next page starts. */
  sessions(limit: number, after?: SessionsPosition): Promise<{ sessions: Session[]; next?: SessionsPosition }>;
  /** An invocation, read consistently. */
  invocation(invocationKey: string): Promise<Invocation | undefined>;
  message(sessionId: string, cursor: number): Promise<Message | undefined>;
  /** Up to `limit` messages after a cursor, ascending, and whether more follow. */
  messages(sessionId: string, after: number, limit: number): Promise<{ messages: Message[]; more: boolean }>;
  /** Up to `limit` audit events after the one at `afterSk`, oldest first, and the sort key to continue after. */
  auditEvents(sessionId: string, afterSk: string | undefined, limit: number): Promise<{ events: AuditEvent[]; nextSk?: string }>;
  /** Keys of every invocation the session accepted, oldest first. */
  invocationKeys(sessionId: string): Promise<string[]>;
  /** Deletes an invocation's records, payloads and checkpoints; safe to repeat. */
  deleteInvocation(invocationKey: string): Promise<void>;
  /** Deletes a session's messages, audit log and references, then the session; safe to repeat. */
  deleteSession(sessionId: string): Promise<void>;
}

/** Where invocations execute: one execution of the run's state machine each. */
export interface RunEngine {
  /** Starts the invocation's execution; starting it again changes nothing. */
  start(invocation: Invocation): Promise<void>;
  /** Stops the invocation's execution if it runs. */
  stop(invocation: Invocation, cause: string): Promise<void>;
}

/** What running a session needs. */
export interface RunStores {
  acceptance: AcceptanceStore;
  attempts: AttemptStore;
  sessions: SessionStore;
  engine: RunEngine;
}

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

async function waitForOutcome(store: SessionStore, invocationKey: string, waitMs: number): Promise<Invocation | undefined> {
  const deadline = Date.now() + waitMs;
  for (let poll = 0; ; poll++) {
    const polled = Date.now();
    const invocation = await store.invocation(invocationKey);
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
export async function runSession(stores: RunStores, request: RunRequest, waitSeconds: number): Promise<RunAnswer> {
  assertRunnable(request.agent);
  const { invocationKey } = request;
  const { acceptance, sessions } = stores;
  const { invocation } = await acceptRun(acceptance, request);
  if (invocation.status === 'RUNNING') {
    // A re-attach starts it too: the first request may have died between accepting and starting.
    try {
      // Before the execution: its first slice reads the configuration from the revision.
      await recordRunRevision(acceptance, request, invocation);
      await stores.engine.start(invocation);
    } catch (error) {
      await finishInvocation(stores.attempts, invocationKey, { Error: error instanceof Error ? error.name : 'Error' });
      throw error;
    }
  }
  const slice = config.waitSliceSeconds ?? Infinity;
  const current = waitSeconds > 0 ? await waitForOutcome(sessions, invocationKey, Math.min(waitSeconds, slice) * 1000) : invocation;
  const [session, message] = await Promise.all([
    sessions.session(request.sessionId),
    current?.status === 'SUCCEEDED' && current.answer_cursor ? sessions.message(request.sessionId, current.answer_cursor) : undefined,
  ]);
  if (!current || !session) throw new NotFoundError(`session ${request.sessionId} was deleted while its run was waited for`);
  if (current.status === 'SUCCEEDED') return { outcome: 'succeeded', session, invocation: current, message };
  if (current.status === 'FAILED') return { outcome: 'failed', session, invocation: current };
  return { outcome: waitSeconds === 0 ? 'accepted' : 'timeout', session, invocation: current };
}

/** A session and a page of its messages. */
export async function readSession(store: SessionStore, sessionId: string, after: number, limit: number) {
  const session = await store.session(sessionId);
  if (!session) throw new NotFoundError(`session ${sessionId} not found`);
  const { messages, more } = await store.messages(sessionId, after, limit);
  const last = messages.at(-1);
  return {
    session: sessionView(session),
    messages,
    ...(more && last ? { next_cursor: String(last.cursor) } : {}),
  };
}

/** A page of the organization's sessions, newest `updated_at` first. */
export async function readSessions(store: SessionStore, after: string | undefined, limit: number) {
  const position = after ? await verify(store, 'sessions', after) : undefined;
  if (position && (typeof position.listed !== 'string' || typeof position.id !== 'string')) throw new InvalidInputError('invalid pagination cursor');
  const { sessions, next } = await store.sessions(limit, position && { listed: position.listed as string, id: position.id as string });
  return {
    sessions: sessions.map(sessionView),
    ...(next ? { next_cursor: await sign(store, 'sessions', { ...next }) } : {}),
  };
}

/** A page of a session's audit log in event time order; its cursors are bound to the session too. */
export async function readAudit(store: SessionStore, sessionId: string, after: string | undefined, limit: number) {
  const position = after ? await verify(store, 'audit', after) : undefined;
  if (position && (position.sessionId !== sessionId || typeof position.sk !== 'string')) throw new InvalidInputError('invalid pagination cursor');
  if (!(await store.session(sessionId))) throw new NotFoundError(`session ${sessionId} not found`);
  const { events, nextSk } = await store.auditEvents(sessionId, position?.sk as string | undefined, limit);
  return {
    events,
    ...(nextSk ? { next_cursor: await sign(store, 'audit', { sessionId, sk: nextSk }) } : {}),
  };
}

const DELETED = 'the session was deleted';

/** What deleting a session needs. */
export type DeletionStores = Pick<RunStores, 'attempts' | 'sessions' | 'engine'>;

/**
 * Ends a running invocation because its session is being deleted: records it FAILED
 * (interrupted), then stops its execution. Every later task of the execution finds it
 * ended (or gone) and does nothing; the outcome's session update needs the session's
 * lock, so nothing recreates the session.
 */
async function interrupt(stores: DeletionStores, invocationKey: string): Promise<void> {
  const invocation = await stores.sessions.invocation(invocationKey);
  if (invocation?.status !== 'RUNNING') return;
  await interruptInvocation(stores.attempts, invocationKey, DELETED);
  await stores.engine.stop(invocation, DELETED);
}

/**
 * Deletes a session with its messages, audit log, invocations (attempts, spans) and their
 * payloads and checkpoints. The session item goes last, so a delete that fails midway can
 * be repeated. Its invocation keys are free again afterwards.
 */
export async function deleteSession(stores: DeletionStores, sessionId: string): Promise<void> {
  const { sessions } = stores;
  const session = await sessions.session(sessionId);
  if (!session) throw new NotFoundError(`session ${sessionId} not found`);
  if (session.current_invocation_key) await interrupt(stores, session.current_invocation_key);
  for (const invocationKey of await sessions.invocationKeys(sessionId)) await sessions.deleteInvocation(invocationKey);
  await sessions.deleteSession(sessionId);
}
