import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { executionTimeoutSeconds, invocationStateMachine, RUN_STEPS_TIMEOUT_SECONDS, type WorkflowFunctions } from '#functions/workflow/definition';

// asl-validator is CommonJS and ships no types.
const validate = createRequire(import.meta.url)('asl-validator') as (definition: unknown) => { isValid: boolean; errors: unknown[] };

const arn = (name: string) => `arn:aws:lambda:us-east-1:123456789012:function:${name}`;
const FUNCTIONS: WorkflowFunctions = {
  runSteps: arn('run-steps'),
  settleAttempt: arn('settle-attempt'),
  recordOutcome: arn('record-outcome'),
};

describe('the invocation state machine definition', () => {
  it.each([
    { attemptTimeoutSeconds: 1, maxAttempts: 1 },
    { attemptTimeoutSeconds: 1, maxAttempts: 10 },
    { attemptTimeoutSeconds: 900, maxAttempts: 1 },
    { attemptTimeoutSeconds: 900, maxAttempts: 10 },
  ])('is valid Amazon States Language with %o', (settings) => {
    // The validator writes defaults into what it checks.
    const definition = structuredClone(invocationStateMachine(FUNCTIONS, settings));

    const { isValid, errors } = validate(definition);

    expect(errors).toEqual([]);
    expect(isValid).toBe(true);
  });

  it('is checked by a validator that finds a broken transition', () => {
    const definition = structuredClone(invocationStateMachine(FUNCTIONS, { attemptTimeoutSeconds: 1, maxAttempts: 1 }));
    definition.States.SettleAttempt.Next = 'Nowhere';

    expect(validate(definition).isValid).toBe(false);
  });

  it('bounds RunSteps by the Lambda maximum, never by the attempt timeout', () => {
    const definition = invocationStateMachine(FUNCTIONS, { attemptTimeoutSeconds: 1, maxAttempts: 3 });

    expect(definition.States.RunSteps.TimeoutSeconds).toBe(RUN_STEPS_TIMEOUT_SECONDS);
    expect(definition.States.RunSteps.Catch).toEqual([expect.objectContaining({ ErrorEquals: ['States.ALL'], Next: 'SettleAttempt' })]);
  });

  it('gives the execution an overall timeout that fits every attempt at its longest, at most a year', () => {
    const shortest = executionTimeoutSeconds({ attemptTimeoutSeconds: 1, maxAttempts: 1 });
    const longest = executionTimeoutSeconds({ attemptTimeoutSeconds: 900, maxAttempts: 10 });

    // 200 steps of a model call and 15 tool calls, each silent 1 s, plus a slice.
    expect(shortest).toBe(200 * 16 + RUN_STEPS_TIMEOUT_SECONDS);
    expect(executionTimeoutSeconds({ attemptTimeoutSeconds: 1, maxAttempts: 3 })).toBe(3 * shortest);
    expect(longest).toBe(10 * (200 * 16 * 900 + RUN_STEPS_TIMEOUT_SECONDS));
    expect(longest).toBeLessThanOrEqual(365 * 86_400);
    expect(invocationStateMachine(FUNCTIONS, { attemptTimeoutSeconds: 2, maxAttempts: 2 }).TimeoutSeconds).toBe(2 * (200 * 16 * 2 + 900));
  });
});
