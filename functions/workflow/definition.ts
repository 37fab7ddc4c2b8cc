/**
 * The invocation state machine, defined once as plain Amazon States Language: CDK deploys
 * it with the task functions' ARNs, the local cloud runs it with aws-local-stepfunctions.
 * It passes only ids and small verdicts between states; everything else lives in the table
 * and the bucket (Step Functions carries at most 256 KB).
 *
 *   StartAttempt -> RunSteps -> (continue? RunSteps) -> RecordOutcome
 *                      | error (crash, timeout, ...)
 *                      v
 *                 SettleAttempt -> (retry? StartAttempt) -> RecordOutcome
 */

/** The task functions, by role: ARNs on AWS, module names locally. */
export interface WorkflowFunctions {
  startAttempt: string;
  runSteps: string;
  settleAttempt: string;
  recordOutcome: string;
}

/** The execution input, and what every task receives and returns (plus its own fields). */
export interface InvocationRef {
  organization_id: string;
  invocation_key: string;
}

/** What a task returns in `$.step` / what the Choice states look at. */
export interface StepVerdict {
  /** RunSteps: `continue` after a time budget, `done` once the attempt finished. */
  state?: 'continue' | 'done';
  /** SettleAttempt: whether another attempt follows. */
  retry?: boolean;
}

// Lambda's own transient failures (throttling, service faults) are retried by Step
// Functions before the attempt counts as failed; the function's errors are not.
const lambdaRetry = [
  {
    ErrorEquals: ['Lambda.ServiceException', 'Lambda.AWSLambdaException', 'Lambda.SdkClientException', 'Lambda.TooManyRequestsException'],
    IntervalSeconds: 1,
    MaxAttempts: 3,
    BackoffRate: 2,
  },
];

function task(partition: string, functionName: string, timeoutSeconds: number, next: string, extra: Record<string, unknown> = {}) {
  return {
    Type: 'Task',
    Resource: `arn:${partition}:states:::lambda:invoke`,
    Parameters: { FunctionName: functionName, 'Payload.$': '$' },
    // Keep the execution state to the invocation's ids plus this task's verdict.
    ResultSelector: { 'step.$': '$.Payload' },
    ResultPath: '$.result',
    OutputPath: '$',
    TimeoutSeconds: timeoutSeconds,
    Retry: lambdaRetry,
    Next: next,
    ...extra,
  };
}

/** Seconds a bookkeeping task (start, settle, record) may take. */
export const BOOKKEEPING_TIMEOUT_SECONDS = 60;

/** The state machine for one invocation; `partition` is `aws` but for China or GovCloud regions. */
export function invocationStateMachine(functions: WorkflowFunctions, attemptTimeoutSeconds: number, partition = 'aws') {
  const lambdaTask = (...args: Parameters<typeof task> extends [string, ...infer Rest] ? Rest : never) => task(partition, ...args);
  return {
    Comment: 'One invocation of a session: attempts until one succeeds or MAX_ATTEMPTS have failed.',
    StartAt: 'StartAttempt',
    States: {
      StartAttempt: lambdaTask(functions.startAttempt, BOOKKEEPING_TIMEOUT_SECONDS, 'RunSteps', {
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'RecordOutcome' }],
      }),
      RunSteps: lambdaTask(functions.runSteps, attemptTimeoutSeconds, 'Continue?', {
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'SettleAttempt' }],
      }),
      'Continue?': {
        Type: 'Choice',
        Choices: [{ Variable: '$.result.step.state', StringEquals: 'continue', Next: 'RunSteps' }],
        Default: 'RecordOutcome',
      },
      SettleAttempt: lambdaTask(functions.settleAttempt, BOOKKEEPING_TIMEOUT_SECONDS, 'Retry?', {
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'RecordOutcome' }],
      }),
      'Retry?': {
        Type: 'Choice',
        Choices: [{ Variable: '$.result.step.retry', BooleanEquals: true, Next: 'StartAttempt' }],
        Default: 'RecordOutcome',
      },
      RecordOutcome: lambdaTask(functions.recordOutcome, BOOKKEEPING_TIMEOUT_SECONDS, 'Done'),
      Done: { Type: 'Succeed' },
    },
  };
}
