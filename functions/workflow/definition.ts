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

/** A Lambda task of the invocation's ids, its verdict kept at `$.result.step`. */
function task(
  partition: string,
  spec: { functionName: string; timeoutSeconds: number; next: string; catchTo?: string },
) {
  const { functionName, timeoutSeconds, next, catchTo } = spec;
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
    ...(catchTo ? { Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: catchTo }] } : {}),
  };
}

/** Seconds a bookkeeping task (start, settle, record) may take. */
export const BOOKKEEPING_TIMEOUT_SECONDS = 60;

/** The state machine for one invocation; `partition` is `aws` but for China or GovCloud regions. */
export function invocationStateMachine(functions: WorkflowFunctions, attemptTimeoutSeconds: number, partition = 'aws') {
  const bookkeeping = BOOKKEEPING_TIMEOUT_SECONDS;
  return {
    Comment: 'One invocation of a session: attempts until one succeeds or MAX_ATTEMPTS have failed.',
    StartAt: 'StartAttempt',
    States: {
      StartAttempt: task(partition, { functionName: functions.startAttempt, timeoutSeconds: bookkeeping, next: 'RunSteps', catchTo: 'RecordOutcome' }),
      RunSteps: task(partition, { functionName: functions.runSteps, timeoutSeconds: attemptTimeoutSeconds, next: 'Continue?', catchTo: 'SettleAttempt' }),
      'Continue?': {
        Type: 'Choice',
        Choices: [{ Variable: '$.result.step.state', StringEquals: 'continue', Next: 'RunSteps' }],
        Default: 'RecordOutcome',
      },
      SettleAttempt: task(partition, { functionName: functions.settleAttempt, timeoutSeconds: bookkeeping, next: 'Retry?', catchTo: 'RecordOutcome' }),
      'Retry?': {
        Type: 'Choice',
        Choices: [{ Variable: '$.result.step.retry', BooleanEquals: true, Next: 'StartAttempt' }],
        Default: 'RecordOutcome',
      },
      RecordOutcome: task(partition, { functionName: functions.recordOutcome, timeoutSeconds: bookkeeping, next: 'Done' }),
      Done: { Type: 'Succeed' },
    },
  };
}
