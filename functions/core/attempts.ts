/**
 * The attempt lifecycle the state machine drives: start an attempt, settle a failed one
 * (classify it and decide on another), and record the invocation's outcome.
 */
import type { Attempt, Failure, FailureKind, Invocation, Outcome, Session, Usage } from '#core/model';
import { config } from '#kit/config';
import { METRIC } from '#kit/metric-names';
import { count } from '#kit/metrics';
import { announceOutcome, type DeliveryStarter } from './deliveries';
import { InvocationEndedError, NotFoundError } from './errors';
import { totalUsage } from './usage';

/** What the attempt lifecycle reads and writes, bound to one organization. */
export interface AttemptStore {
  invocation(invocationKey: string): Promise<Invocation | undefined>;
  session(sessionId: string): Promise<Session | undefined>;
  /** The invocation's attempts, oldest first, read consistently. */
  attempts(invocationKey: string): Promise<Attempt[]>;
  /** Opens attempt `number` while the invocation runs: `exists` when it was opened already, `ended` when the invocation is not RUNNING. */
  openAttempt(invocation: Pick<Invocation, 'invocation_key' | 'started_at'>, number: number, startedAt: string): Promise<'opened' | 'exists' | 'ended'>;
  /** Ends a running attempt; false when it had ended already. */
  endAttempt(
    invocationKey: string,
    number: number,
    outcome: { status: 'SUCCEEDED'; answer: string; ended_at: string } | { status: 'FAILED'; failure: Failure; ended_at: string },
  ): Promise<boolean>;
  /**
   * Records the outcome while the invocation runs, in one step: its status, the session
   * released, the answer as the assistant message, the audit event. True when this call recorded it.
   */
  recordOutcome(outcome: Outcome): Promise<boolean>;
  /** Where a recorded outcome is announced (webhooks, the OTLP export). */
  readonly deliveries: DeliveryStarter;
}

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
const FINAL_ERRORS = new Set(['MaxStepsError', 'ProviderRejectedError', 'InvocationEndedError', 'AttemptsExhaustedError', 'LimitReachedError']);

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
  store: AttemptStore,
  invocationKey: string,
  known?: { invocation: Pick<Invocation, 'invocation_key' | 'started_at'>; after: number },
): Promise<number> {
  const now = new Date().toISOString();
  if (known && known.after < config.maxAttempts) {
    const opened = await store.openAttempt(known.invocation, known.after + 1, now);
    if (opened === 'opened') {
      count(METRIC.attemptsStarted);
      return known.after + 1;
    }
    if (opened === 'ended') throw new InvocationEndedError(`invocation ${invocationKey} is no longer running`);
  }
  const invocation = await store.invocation(invocationKey);
  if (invocation?.status !== 'RUNNING') throw new InvocationEndedError(`invocation ${invocationKey} is no longer running`);
  const attempts = await store.attempts(invocationKey);
  for (const dangling of running(attempts)) {
    await store.endAttempt(invocationKey, dangling.number, {
      status: 'FAILED',
      failure: { kind: 'interrupted', message: 'the attempt was cut off before it finished' },
      ended_at: now,
    });
  }
  if (attempts.length >= config.maxAttempts) throw new AttemptsExhaustedError(`all ${config.maxAttempts} attempts have run`);
  const number = attempts.length + 1;
  const opened = await store.openAttempt(invocation, number, now);
  if (opened === 'ended') throw new InvocationEndedError(`invocation ${invocationKey} is no longer running`);
  count(METRIC.attemptsStarted);
  return number;
}

/** Ends the running attempt as failed: the last attempt's number, and whether another should follow. */
export async function settleFailedAttempt(store: AttemptStore, invocationKey: string, error: TaskError): Promise<{ attempt: number; retry: boolean }> {
  const { failure, retry } = classify(error);
  const attempts = await store.attempts(invocationKey);
  const now = new Date().toISOString();
  for (const attempt of running(attempts)) {
    await store.endAttempt(invocationKey, attempt.number, { status: 'FAILED', failure, ended_at: now });
  }
  const invocation = await store.invocation(invocationKey);
  return { attempt: attempts.length, retry: retry && invocation?.status === 'RUNNING' && attempts.length < config.maxAttempts };
}

/**
 * Records the invocation's outcome from its latest attempt: its answer when it succeeded,
 * else its failure (or `internal` when no attempt could start). Safe to repeat.
 */
export async function finishInvocation(store: AttemptStore, invocationKey: string, error?: TaskError): Promise<void> {
  const invocation = await store.invocation(invocationKey);
  if (!invocation) return;
  if (invocation.status !== 'RUNNING') {
    // Recorded already, perhaps by a task that died before it announced it: announce it (again).
    await announceOutcome(store.deliveries, invocation);
    return;
  }
  const attempts = await store.attempts(invocationKey);
  const now = new Date().toISOString();
  const last = attempts.at(-1);
  let failure: Failure | undefined;
  if (error?.Error === 'LimitReachedError') {
    // Reached before an attempt could start (or ended one): the limit, not an earlier attempt's failure, is why.
    failure = classify(error).failure;
    if (last?.status === 'RUNNING') await store.endAttempt(invocationKey, last.number, { status: 'FAILED', failure, ended_at: now });
  } else if (last?.status === 'RUNNING') {
    // Reached through a bookkeeping task's failure while an attempt was open.
    failure = classify(error ?? {}).failure;
    await store.endAttempt(invocationKey, last.number, { status: 'FAILED', failure, ended_at: now });
  } else if (last?.status === 'FAILED') {
    failure = last.failure;
  } else if (!last) {
    failure = { kind: 'internal', message: `the invocation could not start${error?.Error ? ` (${error.Error})` : ''}` };
  }
  const session = await store.session(invocation.session_id);
  if (!session) return;
  const usage = totalUsage(attempts);
  const recorded = await store.recordOutcome({
    invocation,
    endedAt: now,
    messageCount: session.message_count,
    usage,
    ...(failure ? { failure } : { answer: last!.answer ?? '' }),
    // A cancel ends the attempt before it records the outcome: the execution, finding the
    // attempt ended, may record it first, and it is the cancel's all the same.
    ...(failure?.message === CANCELLED ? { cancelled: true as const } : {}),
  });
  if (!recorded) return;
  countOutcome(failure);
  await announceOutcome(store.deliveries, { ...invocation, status: failure ? 'FAILED' : 'SUCCEEDED', ended_at: now, usage, ...(failure ? { failure } : {}) });
}

/**
 * Ends a still-running invocation as FAILED `interrupted` from outside its execution (its
 * session deleted, its execution stopped, failed past the definition's catches or timed
 * out): its running attempts end with the same failure, then the outcome is recorded and
 * the session released. Safe to repeat; does nothing once the outcome is recorded.
 */
export async function interruptInvocation(store: AttemptStore, invocationKey: string, message: string, how: { cancelled?: true } = {}): Promise<boolean> {
  const invocation = await store.invocation(invocationKey);
  if (!invocation) return false;
  if (invocation.status !== 'RUNNING') {
    // Recorded already, perhaps by a request that died before it announced it: announce it (again).
    await announceOutcome(store.deliveries, invocation);
    return false;
  }
  const failure: Failure = { kind: 'interrupted', message };
  const now = new Date().toISOString();
  const attempts = await store.attempts(invocationKey);
  for (const attempt of running(attempts)) {
    await store.endAttempt(invocationKey, attempt.number, { status: 'FAILED', failure, ended_at: now });
  }
  const session = await store.session(invocation.session_id);
  if (!session) return false;
  const usage = totalUsage(attempts);
  const recorded = await store.recordOutcome({ invocation, endedAt: now, messageCount: session.message_count, usage, failure, ...how });
  if (!recorded) return false;
  countOutcome(failure);
  await announceOutcome(store.deliveries, { ...invocation, status: 'FAILED', ended_at: now, usage, failure, ...how });
  return true;
}

/** The failure message of a cancelled invocation (the contract has it start with `cancelled`). */
export const CANCELLED = 'cancelled by a client request';

/**
 * Cancels a running invocation: its outcome is recorded FAILED `interrupted` (`cancelled`),
 * releasing the session at once, then its execution is stopped. A slice still in flight
 * learns of it at its next write, which is refused, so no model or tool call starts
 * afterwards. `cancelled` is false when the invocation had ended otherwise (its own
 * outcome recorded first); repeating a cancel answers as the first did.
 */
export async function cancelInvocation(
  store: AttemptStore,
  engine: { stop(invocation: Invocation, cause: string): Promise<void> },
  invocationKey: string,
): Promise<{ cancelled: boolean; invocation: Invocation }> {
  const invocation = await store.invocation(invocationKey);
  if (!invocation) throw new NotFoundError(`invocation ${invocationKey} not found`);
  if (invocation.status === 'RUNNING') {
    await interruptInvocation(store, invocationKey, CANCELLED, { cancelled: true });
    await engine.stop(invocation, CANCELLED);
  }
  const ended = await store.invocation(invocationKey);
  // Gone: its session was deleted meanwhile.
  if (!ended) throw new NotFoundError(`invocation ${invocationKey} not found`);
  return { cancelled: ended.cancelled === true, invocation: ended };
}

/** Counts an outcome this process recorded: succeeded, or failed by kind. */
export function countOutcome(failure?: Failure): void {
  if (failure) count(METRIC.invocationsFailed, { kind: failure.kind });
  else count(METRIC.invocationsSucceeded);
}
