/**
 * The invocation state machine, defined once as plain Amazon States Language: CDK deploys
 * it with the task functions' ARNs, the local cloud runs it with aws-local-stepfunctions.
 * It passes only ids and small verdicts between states; everything else lives in the table
 * and the bucket (Step Functions carries at most 256 KB).
 *
 *   StartAttempt -> RunSteps -> (continue? RunSteps) -> Done (RunSteps recorded the outcome)
 *                      | error (crash, no_progress, timeout, ...)
 *                      v
 *                 SettleAttempt -> (retry? StartAttempt) -> RecordOutcome -> Done
 *
 * RunSteps is bounded by the Lambda timeout only (a slice may run for minutes); the
 * attempt's silence is measured inside it (core/watchdog.ts), from the handler call.
 */

/** The task functions, by role: ARNs on AWS, module names locally. */
export interface WorkflowFunctions {
  startAttempt: string;
  runSteps: string;
  settleAttempt: string;
  recordOutcome: string;
}

/** What names an invocation: the execution input's ids. */
export interface InvocationRef {
  organization_id: string;
  invocation_key: string;
}

/**
 * The execution input: the invocation's ids and the facts of its acceptance that never
 * change, so no task reads the invocation item to learn them.
 */
export interface ExecutionInput extends InvocationRef {
  session_id: string;
  session_position: number;
  agent_name: string;
  agent_revision: string;
  started_at: string;
  /** The cursor of the invocation's user message; the answer takes the next one. */
  user_cursor: number;
}

/** What a task returns, kept at `$.result.step` until the next task replaces it. */
export interface StepVerdict {
  /** The attempt the task worked on (StartAttempt: the one it opened). */
  attempt?: number;
  /** RunSteps: `continue` after its slice, `done` once it recorded the outcome. */
  state?: 'continue' | 'done';
  /** SettleAttempt: whether another attempt follows. */
  retry?: boolean;
}

/** What every task receives: the execution input, the last verdict, and the error a Catch kept. */
export interface TaskEvent extends ExecutionInput {
  result?: { step?: StepVerdict };
  error?: { Error?: string; Cause?: string };
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

/**
 * Seconds one RunSteps slice may take: Lambda's maximum. A slice stops starting steps
 * halfway through, so this bounds slice length, never an attempt's silence.
 */
export const RUN_STEPS_TIMEOUT_SECONDS = 900;

/**
 * The state machine for one invocation; `partition` is `aws` but for China or GovCloud
 * regions. The attempt timeout bounds silence inside RunSteps, not any state here.
 */
export function invocationStateMachine(functions: WorkflowFunctions, _attemptTimeoutSeconds: number, partition = 'aws') {
  const bookkeeping = BOOKKEEPING_TIMEOUT_SECONDS;
  return {
    Comment: 'One invocation of a session: attempts until one succeeds or MAX_ATTEMPTS have failed.',
    StartAt: 'StartAttempt',
    States: {
      StartAttempt: task(partition, { functionName: functions.startAttempt, timeoutSeconds: bookkeeping, next: 'RunSteps', catchTo: 'RecordOutcome' }),
      RunSteps: task(partition, { functionName: functions.runSteps, timeoutSeconds: RUN_STEPS_TIMEOUT_SECONDS, next: 'Continue?', catchTo: 'SettleAttempt' }),
      'Continue?': {
        Type: 'Choice',
        Choices: [{ Variable: '$.result.step.state', StringEquals: 'continue', Next: 'RunSteps' }],
        Default: 'Done',
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
