/**
 * The attempt lifecycle the state machine drives: start an attempt, settle a failed one
 * (classify it and decide on another), and record the invocation's outcome.
 */
import { endAttempt, listAttempts, putAttempt, type Attempt, type Usage } from '#data/attempts';
import { getInvocation, getSession, recordOutcome } from '#data/invocations';
import type { Failure, FailureKind, Invocation } from '#core/model';
import { config } from '#kit/config';
import { METRIC } from '#kit/metric-names';
import { count } from '#kit/metrics';
import { InvocationEndedError } from './errors';

/** The error a task failed with, as Step Functions reports it (`$.error`). */
export interface TaskError {
  Error?: string;
  Cause?: string;
}

/** Thrown by StartAttempt when every allowed attempt has run. */
export class AttemptsExhaustedError extends Error {
  override name = 'AttemptsExhaustedError';
}

// Errors whose next attempt cannot do better: the configuration or the session decides.
const FINAL_ERRORS = new Set(['MaxStepsError', 'ProviderRejectedError', 'InvocationEndedError', 'AttemptsExhaustedError']);

/** The failure class of a task error and whether another attempt may help. */
export function classify(error: TaskError): { failure: Failure; retry: boolean } {
  const name = error.Error ?? 'Error';
  const detail = causeMessage(error.Cause);
  let kind: FailureKind;
  let message: string;
  if (name === 'Runtime.ExitError' || name === 'Lambda.Unknown' || name.startsWith('Runtime.')) {
    kind = 'crash';
    message = 'the harness process exited unexpectedly';
  } else if (name === 'NoProgressError' || name === 'States.Timeout' || name === 'Sandbox.Timedout' || name === 'States.HeartbeatTimeout') {
    kind = 'no_progress';
    message = `the attempt made no progress for ${config.attemptTimeoutSeconds} s and was stopped`;
  } else {
    kind = 'interrupted';
    message = detail ?? name;
  }
  return { failure: { kind, message }, retry: !FINAL_ERRORS.has(name) };
}

function causeMessage(cause: string | undefined): string | undefined {
  if (!cause) return undefined;
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    return typeof parsed.errorMessage === 'string' ? parsed.errorMessage : cause;
  } catch {
    return cause;
  }
}

const running = (attempts: Attempt[]) => attempts.filter((attempt) => attempt.status === 'RUNNING');

/**
 * Opens the next attempt: `after` + 1 in one conditional write when the caller knows the
 * last attempt (the state machine does). Otherwise, or when that number exists already (the
 * execution started over after a restart), it reads the attempts: one still RUNNING was
 * cut off (the service restarted, or a task was lost) and is ended as interrupted first.
 */
export async function startNextAttempt(
  organizationId: string,
  invocationKey: string,
  known?: { invocation: Pick<Invocation, 'invocation_key' | 'started_at'>; after: number },
): Promise<number> {
  const now = new Date().toISOString();
  if (known && known.after < config.maxAttempts) {
    const opened = await putAttempt(organizationId, known.invocation, known.after + 1, now);
    if (opened === 'opened') {
      count(METRIC.attemptsStarted);
      return known.after + 1;
    }
    if (opened === 'ended') throw new InvocationEndedError(`invocation ${invocationKey} is no longer running`);
  }
  const invocation = await getInvocation(organizationId, invocationKey);
  if (invocation?.status !== 'RUNNING') throw new InvocationEndedError(`invocation ${invocationKey} is no longer running`);
  const attempts = await listAttempts(organizationId, invocationKey);
  for (const dangling of running(attempts)) {
    await endAttempt(organizationId, invocationKey, dangling.number, {
      status: 'FAILED',
      failure: { kind: 'interrupted', message: 'the attempt was cut off before it finished' },
      ended_at: now,
    });
  }
  if (attempts.length >= config.maxAttempts) throw new AttemptsExhaustedError(`all ${config.maxAttempts} attempts have run`);
  const number = attempts.length + 1;
  const opened = await putAttempt(organizationId, invocation, number, now);
  if (opened === 'ended') throw new InvocationEndedError(`invocation ${invocationKey} is no longer running`);
  count(METRIC.attemptsStarted);
  return number;
}

/** Ends the running attempt as failed: the last attempt's number, and whether another should follow. */
export async function settleFailedAttempt(organizationId: string, invocationKey: string, error: TaskError): Promise<{ attempt: number; retry: boolean }> {
  const { failure, retry } = classify(error);
  const attempts = await listAttempts(organizationId, invocationKey);
  const now = new Date().toISOString();
  for (const attempt of running(attempts)) {
    await endAttempt(organizationId, invocationKey, attempt.number, { status: 'FAILED', failure, ended_at: now });
  }
  const invocation = await getInvocation(organizationId, invocationKey);
  return { attempt: attempts.length, retry: retry && invocation?.status === 'RUNNING' && attempts.length < config.maxAttempts };
}

/** The usage of all attempts together. */
export function totalUsage(attempts: Pick<Attempt, 'usage'>[]): Usage {
  return attempts.reduce(
    (sum, attempt) => ({ input_tokens: sum.input_tokens + attempt.usage.input_tokens, output_tokens: sum.output_tokens + attempt.usage.output_tokens }),
    { input_tokens: 0, output_tokens: 0 },
  );
}

/**
 * Records the invocation's outcome from its latest attempt: its answer when it succeeded,
 * else its failure (or `internal` when no attempt could start). Safe to repeat.
 */
export async function finishInvocation(organizationId: string, invocationKey: string, error?: TaskError): Promise<void> {
  const invocation = await getInvocation(organizationId, invocationKey);
  if (invocation?.status !== 'RUNNING') return;
  const attempts = await listAttempts(organizationId, invocationKey);
  const now = new Date().toISOString();
  const last = attempts.at(-1);
  let failure: Failure | undefined;
  if (last?.status === 'RUNNING') {
    // Reached through a bookkeeping task's failure while an attempt was open.
    failure = classify(error ?? {}).failure;
    await endAttempt(organizationId, invocationKey, last.number, { status: 'FAILED', failure, ended_at: now });
  } else if (last?.status === 'FAILED') {
    failure = last.failure;
  } else if (!last) {
    failure = { kind: 'internal', message: `the invocation could not start${error?.Error ? ` (${error.Error})` : ''}` };
  }
  const session = await getSession(organizationId, invocation.session_id);
  if (!session) return;
  const recorded = await recordOutcome({
    organizationId,
    invocation,
    endedAt: now,
    messageCount: session.message_count,
    usage: totalUsage(attempts),
    ...(failure ? { failure } : { answer: last!.answer ?? '' }),
  });
  if (recorded) countOutcome(failure);
}

/**
 * Ends a still-running invocation as FAILED `interrupted` from outside its execution (its
 * session deleted, its execution stopped, failed past the definition's catches or timed
 * out): its running attempts end with the same failure, then the outcome is recorded and
 * the session released. Safe to repeat; does nothing once the outcome is recorded.
 */
export async function interruptInvocation(organizationId: string, invocationKey: string, message: string): Promise<boolean> {
  const invocation = await getInvocation(organizationId, invocationKey);
  if (invocation?.status !== 'RUNNING') return false;
  const failure: Failure = { kind: 'interrupted', message };
  const now = new Date().toISOString();
  const attempts = await listAttempts(organizationId, invocationKey);
  for (const attempt of running(attempts)) {
    await endAttempt(organizationId, invocationKey, attempt.number, { status: 'FAILED', failure, ended_at: now });
  }
  const session = await getSession(organizationId, invocation.session_id);
  if (!session) return false;
  const recorded = await recordOutcome({ organizationId, invocation, endedAt: now, messageCount: session.message_count, usage: totalUsage(attempts), failure });
  if (recorded) countOutcome(failure);
  return recorded;
}

/** Counts an outcome this process recorded: succeeded, or failed by kind. */
export function countOutcome(failure?: Failure): void {
  if (failure) count(METRIC.invocationsFailed, { kind: failure.kind });
  else count(METRIC.invocationsSucceeded);
}
