/**
 * The attempt lifecycle's rules (`core/attempts.ts`) against an in-memory store: how a task
 * error is classified, when another attempt follows, how the outcome is recorded (and only
 * once), and how an invocation is interrupted from outside. No network.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AttemptsExhaustedError, cancelInvocation, classify, finishInvocation, interruptInvocation, settleFailedAttempt, startNextAttempt } from '#core/attempts';
import { InvocationEndedError, NotFoundError } from '#core/errors';
import { memoryAttemptStore } from '../fakes/memory-attempt-store';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('classify', () => {
  it.each([
    [{ Error: 'Runtime.ExitError' }, 'crash', true],
    [{ Error: 'NoProgressError' }, 'no_progress', true],
    [{ Error: 'States.Timeout' }, 'no_progress', true],
    [{ Error: 'Sandbox.Timedout' }, 'no_progress', true],
    [{ Error: 'MaxStepsError', Cause: '{"errorMessage":"max_steps (2) reached"}' }, 'interrupted', false],
    [{ Error: 'ProviderRejectedError', Cause: '{"errorMessage":"401 bad key"}' }, 'interrupted', false],
    [{ Error: 'InvocationEndedError' }, 'interrupted', false],
    [{ Error: 'ProviderUnavailableError', Cause: 'the model answered 503' }, 'interrupted', true],
  ])('%o is %s, retry %s', (error, kind, retry) => {
    expect(classify(error)).toMatchObject({ failure: { kind }, retry });
  });

  it('says what happened: the timeout that was passed, or the error message a task reported', () => {
    vi.stubEnv('ATTEMPT_TIMEOUT_SECONDS', '7');

    expect(classify({ Error: 'NoProgressError' }).failure.message).toBe('the attempt made no progress for 7 s and was stopped');
    expect(classify({ Error: 'MaxStepsError', Cause: '{"errorMessage":"max_steps (2) reached"}' }).failure.message).toBe('max_steps (2) reached');
  });
});

describe('the attempt lifecycle', () => {
  it('opens attempts one after another while the invocation runs, up to MAX_ATTEMPTS', async () => {
    vi.stubEnv('MAX_ATTEMPTS', '2');
    const store = memoryAttemptStore();

    expect(await startNextAttempt(store, 'key-1')).toBe(1);
    await settleFailedAttempt(store, 'key-1', { Error: 'Runtime.ExitError' });
    expect(await startNextAttempt(store, 'key-1', { invocation: (await store.invocation('key-1'))!, after: 1 })).toBe(2);
    await settleFailedAttempt(store, 'key-1', { Error: 'Runtime.ExitError' });

    await expect(startNextAttempt(store, 'key-1')).rejects.toBeInstanceOf(AttemptsExhaustedError);
  });

  it('ends an attempt a restart cut off as interrupted before it opens the next', async () => {
    const store = memoryAttemptStore();
    const invocation = (await store.invocation('key-1'))!;
    await startNextAttempt(store, 'key-1', { invocation, after: 0 });

    // The execution started over: it asks for attempt 1 again.
    expect(await startNextAttempt(store, 'key-1', { invocation, after: 0 })).toBe(2);

    expect(store.attemptsOf.get('key-1')!.map((attempt) => [attempt.number, attempt.status, attempt.failure?.kind])).toEqual([
      [1, 'FAILED', 'interrupted'],
      [2, 'RUNNING', undefined],
    ]);
  });

  it('opens no attempt of an invocation that ended', async () => {
    const store = memoryAttemptStore();
    await interruptInvocation(store, 'key-1', 'the session was deleted');

    await expect(startNextAttempt(store, 'key-1')).rejects.toBeInstanceOf(InvocationEndedError);
    await expect(startNextAttempt(store, 'key-1', { invocation: (await store.invocation('key-1'))!, after: 0 })).rejects.toBeInstanceOf(InvocationEndedError);
  });

  it('settles a failed attempt with its class, and asks for another only while one may help', async () => {
    vi.stubEnv('MAX_ATTEMPTS', '3');
    const store = memoryAttemptStore();
    await startNextAttempt(store, 'key-1');

    const transient = await settleFailedAttempt(store, 'key-1', { Error: 'States.Timeout' });
    await startNextAttempt(store, 'key-1');
    const final = await settleFailedAttempt(store, 'key-1', { Error: 'MaxStepsError', Cause: '{"errorMessage":"max_steps (2) reached"}' });

    expect(transient).toEqual({ attempt: 1, retry: true });
    expect(final).toEqual({ attempt: 2, retry: false });
    expect(store.attemptsOf.get('key-1')!.map((attempt) => attempt.failure?.kind)).toEqual(['no_progress', 'interrupted']);
  });

  it('records the last attempt\'s failure as the outcome, with the usage of every attempt, and releases the session, once', async () => {
    const store = memoryAttemptStore();
    await startNextAttempt(store, 'key-1');
    store.attemptsOf.get('key-1')![0]!.usage = { input_tokens: 10, output_tokens: 2 };
    await settleFailedAttempt(store, 'key-1', { Error: 'Runtime.ExitError' });

    await finishInvocation(store, 'key-1');
    await finishInvocation(store, 'key-1');

    expect(store.invocations.get('key-1')).toMatchObject({ status: 'FAILED', failure: { kind: 'crash', message: 'the harness process exited unexpectedly' } });
    expect(store.sessions.get('session-1')).toMatchObject({ state: 'IDLE' });
    expect(store.audit).toEqual([{ invocationKey: 'key-1', type: 'run_failed' }]);
  });

  it('records a successful last attempt\'s answer as the assistant message', async () => {
    const store = memoryAttemptStore();
    await startNextAttempt(store, 'key-1');
    await store.endAttempt('key-1', 1, { status: 'SUCCEEDED', answer: 'hello', ended_at: new Date().toISOString() });
    store.attemptsOf.get('key-1')![0]!.answer = 'hello';

    await finishInvocation(store, 'key-1');

    expect(store.invocations.get('key-1')).toMatchObject({ status: 'SUCCEEDED', answer_cursor: 2 });
    expect(store.messages).toEqual([{ sessionId: 'session-1', cursor: 2, content: 'hello' }]);
  });

  it('fails an invocation whose attempt was still open when a bookkeeping task failed, and one that never started as internal', async () => {
    const open = memoryAttemptStore();
    await startNextAttempt(open, 'key-1');
    const never = memoryAttemptStore();

    await finishInvocation(open, 'key-1', { Error: 'Lambda.ServiceException' });
    await finishInvocation(never, 'key-1', { Error: 'States.Runtime' });

    expect(open.attemptsOf.get('key-1')![0]).toMatchObject({ status: 'FAILED', failure: { kind: 'interrupted' } });
    expect(open.invocations.get('key-1')).toMatchObject({ status: 'FAILED', failure: { kind: 'interrupted' } });
    expect(never.invocations.get('key-1')).toMatchObject({ status: 'FAILED', failure: { kind: 'internal', message: 'the invocation could not start (States.Runtime)' } });
  });

  it('interrupts a running invocation from outside: its attempts and itself end interrupted, once', async () => {
    const store = memoryAttemptStore();
    await startNextAttempt(store, 'key-1');

    expect(await interruptInvocation(store, 'key-1', 'the execution was stopped')).toBe(true);
    expect(await interruptInvocation(store, 'key-1', 'the execution was stopped')).toBe(false);

    expect(store.attemptsOf.get('key-1')![0]).toMatchObject({ status: 'FAILED', failure: { kind: 'interrupted', message: 'the execution was stopped' } });
    expect(store.invocations.get('key-1')).toMatchObject({ status: 'FAILED', failure: { kind: 'interrupted', message: 'the execution was stopped' } });
    expect(store.sessions.get('session-1')!.state).toBe('IDLE');
  });
});

describe('cancelInvocation', () => {
  const engine = () => ({ stopped: [] as string[], async stop(invocation: { invocation_key: string }) { this.stopped.push(invocation.invocation_key); } });

  it('records the outcome as cancelled, ends the running attempt, releases the session, then stops the execution', async () => {
    const store = memoryAttemptStore();
    const executions = engine();
    await startNextAttempt(store, 'key-1');

    const first = await cancelInvocation(store, executions, 'key-1');

    expect(first.cancelled).toBe(true);
    expect(first.invocation).toMatchObject({ status: 'FAILED', cancelled: true, failure: { kind: 'interrupted' } });
    expect(first.invocation.failure!.message).toMatch(/^cancelled/);
    expect(store.attemptsOf.get('key-1')![0]).toMatchObject({ status: 'FAILED', failure: first.invocation.failure });
    expect(store.sessions.get('session-1')!.state).toBe('IDLE');
    expect(executions.stopped).toEqual(['key-1']);
    // Again: the same answer, nothing more done.
    expect(await cancelInvocation(store, executions, 'key-1')).toEqual(first);
    expect(executions.stopped).toEqual(['key-1']);
  });

  it('leaves an invocation that ended otherwise as it is', async () => {
    const store = memoryAttemptStore();
    await startNextAttempt(store, 'key-1');
    await finishInvocation(store, 'key-1', { Error: 'Runtime.ExitError' });

    const answer = await cancelInvocation(store, engine(), 'key-1');

    expect(answer.cancelled).toBe(false);
    expect(answer.invocation).toMatchObject({ status: 'FAILED', failure: { kind: 'crash' } });
    expect(answer.invocation.cancelled).toBeUndefined();
  });

  it('knows no other key', async () => {
    await expect(cancelInvocation(memoryAttemptStore(), engine(), 'nope')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('stays a cancel when the execution records the outcome between the cancel ending the attempt and recording it', async () => {
    const store = memoryAttemptStore();
    await startNextAttempt(store, 'key-1');
    const recordOutcome = store.recordOutcome.bind(store);
    // The execution's own RecordOutcome runs first, finding the attempt the cancel ended.
    store.recordOutcome = async (outcome) => {
      await finishInvocation({ ...store, recordOutcome }, 'key-1', { Error: 'InvocationEndedError' });
      return recordOutcome(outcome);
    };

    const answer = await cancelInvocation(store, engine(), 'key-1');

    expect(answer.cancelled).toBe(true);
    expect(answer.invocation).toMatchObject({ status: 'FAILED', cancelled: true });
  });
});
