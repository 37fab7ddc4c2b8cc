/**
 * The invocation state machine, defined once as plain Amazon States Language: CDK deploys
 * it with the task functions' ARNs, the local cloud runs it with aws-local-stepfunctions.
 * It passes only ids and small verdicts between states; everything else lives in the table
 * and the bucket (Step Functions carries at most 256 KB).
 *
 *   RunSteps -> (continue? RunSteps) -> Done (RunSteps recorded the outcome)
 *      | error (crash, no_progress, timeout, ...)
 *      v
 *   SettleAttempt -> (retry? RunSteps, a new attempt) -> RecordOutcome -> Done
 *
 * RunSteps opens an attempt itself when it is not resuming one, side by side with reading
 * what the attempt needs: one task, one Lambda invocation and one state transition fewer
 * per attempt than a task of its own.
 *
 * RunSteps is bounded by the Lambda timeout only (a slice may run for minutes); the
 * attempt's silence is measured inside it (core/watchdog.ts), from the handler call.
 */
import type { DeliveryOrder } from '#core/deliveries';

/** The task functions, by role: ARNs on AWS, module names locally. */
export interface WorkflowFunctions {
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
  /** The attempt the task worked on: RunSteps resumes it on `continue`, opens the next after SettleAttempt's `retry`. */
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

/**
 * The execution statuses that end an execution without `RecordOutcome` having run for
 * sure: an EventBridge rule on AWS, and the local Step Functions, hand such an execution's
 * status change to the settle-execution function, which ends a still-running invocation.
 */
export const UNSETTLED_EXECUTION_STATUSES = ['FAILED', 'TIMED_OUT', 'ABORTED'] as const;

/** The event's `detail-type`, as Step Functions sends it to EventBridge. */
export const EXECUTION_STATUS_CHANGE = 'Step Functions Execution Status Change';

/** Seconds a bookkeeping task (start, settle, record) may take. */
export const BOOKKEEPING_TIMEOUT_SECONDS = 60;

/**
 * Seconds one RunSteps slice may take: Lambda's maximum. A slice stops starting steps
 * halfway through, so this bounds slice length, never an attempt's silence.
 */
export const RUN_STEPS_TIMEOUT_SECONDS = 900;

// `max_steps` is at most 200 (contracts/agent.ts); a step is a model call and the tool calls
// it asked for, each of which may stay silent up to the attempt timeout. Counting up to 15
// tool calls per step, the longest attempt that keeps making progress is bounded by this.
const CALLS_PER_STEP = 16;
const MAX_STEPS = 200;
// Step Functions Standard runs an execution for at most a year.
const MAX_EXECUTION_SECONDS = 365 * 86_400;

/**
 * The execution's overall timeout: every attempt at its longest (every call silent just
 * short of the attempt timeout, plus one slice's worth of bookkeeping), capped at a year.
 * An execution that still times out is settled as `interrupted` (settle-execution).
 */
export function executionTimeoutSeconds(settings: { attemptTimeoutSeconds: number; maxAttempts: number }): number {
  const attempt = MAX_STEPS * CALLS_PER_STEP * settings.attemptTimeoutSeconds + RUN_STEPS_TIMEOUT_SECONDS;
  return Math.min(MAX_EXECUTION_SECONDS, settings.maxAttempts * attempt);
}

/**
 * The state machine for one invocation; `partition` is `aws` but for China or GovCloud
 * regions. The attempt timeout bounds silence inside RunSteps; here it only sizes the
 * execution's overall timeout.
 */
export function invocationStateMachine(
  functions: WorkflowFunctions,
  settings: { attemptTimeoutSeconds: number; maxAttempts: number },
  partition = 'aws',
) {
  const bookkeeping = BOOKKEEPING_TIMEOUT_SECONDS;
  return {
    Comment: 'One invocation of a session: attempts until one succeeds or MAX_ATTEMPTS have failed.',
    StartAt: 'RunSteps',
    TimeoutSeconds: executionTimeoutSeconds(settings),
    States: {
      RunSteps: task(partition, { functionName: functions.runSteps, timeoutSeconds: RUN_STEPS_TIMEOUT_SECONDS, next: 'Continue?', catchTo: 'SettleAttempt' }),
      'Continue?': {
        Type: 'Choice',
        Choices: [{ Variable: '$.result.step.state', StringEquals: 'continue', Next: 'RunSteps' }],
        Default: 'Done',
      },
      SettleAttempt: task(partition, { functionName: functions.settleAttempt, timeoutSeconds: bookkeeping, next: 'Retry?', catchTo: 'RecordOutcome' }),
      'Retry?': {
        Type: 'Choice',
        Choices: [{ Variable: '$.result.step.retry', BooleanEquals: true, Next: 'RunSteps' }],
        Default: 'RecordOutcome',
      },
      RecordOutcome: task(partition, { functionName: functions.recordOutcome, timeoutSeconds: bookkeeping, next: 'Done' }),
      Done: { Type: 'Succeed' },
    },
  };
}

/** The delivery state machine's task function: an ARN on AWS, a module name locally. */
export interface DeliveryFunctions {
  deliver: string;
}

/** A delivery execution's input: one outcome to one target (`core/deliveries.ts`). */
export interface DeliveryInput extends DeliveryOrder {
  organization_id: string;
}

/**
 * How long a delivery keeps trying: the first retry after a second, each wait twice the
 * last, twelve retries: 1 + 2 + ... + 2048 s, 68 minutes in all, beyond the hour the
 * contract asks for. Three tries (two failures) take about 3 s, so a receiver that is
 * briefly down gets its event within seconds.
 */
export const DELIVERY_RETRY = { IntervalSeconds: 1, BackoffRate: 2, MaxAttempts: 12 } as const;

/** The seconds one try may take: the 10 s answer timeout, plus reading a trace to export. */
export const DELIVER_TIMEOUT_SECONDS = 60;

/**
 * The delivery state machine: one try of `deliver` per state entry, retried on any error
 * with exponential backoff (DELIVERY_RETRY). An execution that runs out of retries ends
 * FAILED, which is where an operator looks for what never arrived (its log keeps every try).
 */
export function deliveryStateMachine(functions: DeliveryFunctions, partition = 'aws') {
  return {
    Comment: "One invocation outcome delivered to one webhook or to the organization's OTLP export, retried for over an hour.",
    StartAt: 'Deliver',
    States: {
      Deliver: {
        Type: 'Task',
        Resource: `arn:${partition}:states:::lambda:invoke`,
        Parameters: { FunctionName: functions.deliver, 'Payload.$': '$' },
        ResultSelector: { 'delivery.$': '$.Payload' },
        TimeoutSeconds: DELIVER_TIMEOUT_SECONDS,
        Retry: [{ ErrorEquals: ['States.ALL'], ...DELIVERY_RETRY }],
        End: true,
      },
    },
  };
}
