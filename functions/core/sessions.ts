/**
 * Running and reading sessions: what POST and GET /sessions/{id} do between the HTTP kit
 * and the data layer.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentConfig } from '#contracts/agent';
import { isProviderAvailable } from '#functions/agent/providers/index';
import { getInvocation, getSession, type Invocation, type Session } from '#data/invocations';
import { getMessage, listMessages, type Message } from '#data/messages';
import { startExecution } from '#data/workflow';
import { finishInvocation } from './attempts';
import { config } from './config';
import { InvalidInputError, NotFoundError } from './errors';
import { acceptRun, type RunRequest } from './runs';

/** A session as clients see it. */
export function sessionView(session: Session) {
  const { id, state, invocation_count, created_at, updated_at, current_invocation_key, agent_name, agent_revision } = session;
  return { id, state, invocation_count, created_at, updated_at, current_invocation_key, agent_name, agent_revision };
}

/**
 * Refuses configurations this deployment cannot run yet, before anything is recorded:
 * a configuration must never be accepted and then quietly run without a part of it.
 */
export function assertRunnable(agent: AgentConfig): void {
  const missing = [
    !isProviderAvailable(agent.model.provider.name) && `model provider ${agent.model.provider.name}`,
    agent.tools?.terminal && 'tools.terminal',
    agent.tools?.web_search && 'tools.web_search',
    agent.mcp_servers?.length && 'mcp_servers',
    agent.memory && 'memory',
    agent.output_format?.type === 'json_schema' && 'output_format json_schema',
  ].filter(Boolean);
  if (missing.length) throw new InvalidInputError(`this deployment does not offer ${missing.join(', ')} yet`);
}

export type RunAnswer =
  | { outcome: 'accepted' | 'timeout'; session: Session; invocation: Invocation }
  | { outcome: 'succeeded'; session: Session; invocation: Invocation; message: Message | undefined }
  | { outcome: 'failed'; session: Session; invocation: Invocation };

// Polling the invocation item: quick at first (short runs), then calmer.
const POLL_START_MS = 50;
const POLL_MAX_MS = 1_000;

async function waitForOutcome(organizationId: string, invocationKey: string, waitMs: number): Promise<Invocation | undefined> {
  const deadline = Date.now() + waitMs;
  for (let pause = POLL_START_MS; ; pause = Math.min(pause * 2, POLL_MAX_MS)) {
    const invocation = await getInvocation(organizationId, invocationKey);
    if (invocation && invocation.status !== 'RUNNING') return invocation;
    const left = deadline - Date.now();
    if (left <= 0) return invocation;
    await sleep(Math.min(pause, left));
  }
}

/** Accepts (or re-attaches to) a run, makes sure it executes, and waits for it as asked. */
export async function runSession(request: RunRequest, waitSeconds: number): Promise<RunAnswer> {
  assertRunnable(request.agent);
  const { organizationId, invocationKey } = request;
  const { invocation } = await acceptRun(request);
  if (invocation.status === 'RUNNING') {
    // A re-attach starts it too: the first request may have died between accepting and starting.
    try {
      await startExecution(organizationId, invocationKey);
    } catch (error) {
      await finishInvocation(organizationId, invocationKey, { Error: error instanceof Error ? error.name : 'Error' });
      throw error;
    }
  }
  const slice = config.waitSliceSeconds ?? Infinity;
  const waited = waitSeconds > 0 ? await waitForOutcome(organizationId, invocationKey, Math.min(waitSeconds, slice) * 1000) : invocation;
  const current = waited ?? invocation;
  const session = (await getSession(organizationId, request.sessionId))!;
  if (current.status === 'SUCCEEDED') {
    const message = current.answer_cursor ? await getMessage(organizationId, request.sessionId, current.answer_cursor) : undefined;
    return { outcome: 'succeeded', session, invocation: current, message };
  }
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
