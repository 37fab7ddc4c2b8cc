import { Aws, Duration, Stack, Validations } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import {
  BOOKKEEPING_TIMEOUT_SECONDS,
  EXECUTION_STATUS_CHANGE,
  invocationStateMachine,
  RUN_STEPS_TIMEOUT_SECONDS,
  UNSETTLED_EXECUTION_STATUSES,
  type WorkflowFunctions,
} from '#functions/workflow/definition';
import { ENV } from '#kit/env';
import { Deliveries } from './deliveries';
import { bindSandbox, SandboxFunction } from './sandbox';
import { bindBedrockModels, bindDeliveries, bindPayloads, bindSecrets, bindTable, logicalId, ServiceFunction } from './service-function';

/** Properties of a {@link Workflow}. */
export interface WorkflowProps {
  readonly table: Table;
  readonly payloads: Bucket;
  /** Secrets Manager name prefix of the organization secrets. */
  readonly secretPrefix: string;
  /**
   * Seconds an attempt may stay silent (no span, step or checkpoint written) before it is
   * stopped as `no_progress`; 1..900.
   * @default 900
   */
  readonly attemptTimeoutSeconds?: number;
  /**
   * Attempts an invocation may make before it fails.
   * @default 3
   */
  readonly maxAttempts?: number;
  /**
   * Days spans are kept after their invocation started.
   * @default 90
   */
  readonly spanRetentionDays?: number;
  /**
   * Bedrock model ids (the catalogue's `bedrock/` entries) RunSteps may invoke; no others.
   * @default none
   */
  readonly bedrockModels?: readonly string[];
}

/** The longest a Lambda function may run, and so the longest one RunSteps slice. */
const MAX_ATTEMPT_TIMEOUT_SECONDS = 900;

// Each attempt repeats the agent's model calls at the organization's cost; past a few,
// a failing invocation needs a person, not another try.
const MAX_ATTEMPTS_LIMIT = 10;

/**
 * The invocation state machine (`functions/workflow/definition.ts`, the same ASL the local
 * cloud runs), its three task functions, the rule that settles an execution ending
 * without its outcome, and the {@link Deliveries} that announce each outcome.
 */
export class Workflow extends Construct {
  /** The invocation state machine. */
  readonly stateMachine: StateMachine;
  /** The delivery state machine, which every function recording an outcome starts. */
  readonly deliveryStateMachine: StateMachine;

  constructor(scope: Construct, id: string, props: WorkflowProps) {
    super(scope, id);
    const attemptTimeoutSeconds = integerIn('attemptTimeoutSeconds', props.attemptTimeoutSeconds ?? 900, 1, MAX_ATTEMPT_TIMEOUT_SECONDS);
    const maxAttempts = integerIn('maxAttempts', props.maxAttempts ?? 3, 1, MAX_ATTEMPTS_LIMIT);
    const spanRetentionDays = integerIn('spanRetentionDays', props.spanRetentionDays ?? 90, 1);
    const spanRetentionSeconds = spanRetentionDays * 24 * 60 * 60;

    this.deliveryStateMachine = new Deliveries(this, 'Deliveries', {
      table: props.table,
      payloads: props.payloads,
      secretPrefix: props.secretPrefix,
      spanRetentionSeconds,
    }).stateMachine;

    const bookkeeping = (id: string, name: string, description: string): ServiceFunction => {
      const fn = new ServiceFunction(this, id, {
        entry: `functions/workflow/${name}.ts`,
        description,
        timeout: Duration.seconds(BOOKKEEPING_TIMEOUT_SECONDS),
      });
      bindTable(fn, props.table, 'read');
      bindTable(fn, props.table, 'write');
      return fn;
    };
    const settleAttempt = bookkeeping('SettleAttempt', 'settle-attempt', 'Workflow task: classify a failed attempt');
    const recordOutcome = bookkeeping('RecordOutcome', 'record-outcome', "Workflow task: record the invocation's outcome");

    const runSteps = new ServiceFunction(this, 'RunSteps', {
      entry: 'functions/workflow/run-steps.ts',
      description: 'Workflow task: run agent steps of the open attempt',
      // Equal to the task's timeout: the function budgets its slice from its own remaining
      // time, so it checkpoints before Step Functions gives up on it. An attempt's silence
      // is bounded inside it (ATTEMPT_TIMEOUT_SECONDS), never by this.
      timeout: Duration.seconds(RUN_STEPS_TIMEOUT_SECONDS),
    });
    bindTable(runSteps, props.table, 'read');
    bindTable(runSteps, props.table, 'write');
    bindPayloads(runSteps, props.payloads, 'read');
    bindPayloads(runSteps, props.payloads, 'write');
    bindSecrets(runSteps, props.secretPrefix, 'read');
    bindBedrockModels(runSteps, props.bedrockModels ?? []);
    // The terminal tool's commands run there, never in RunSteps itself.
    bindSandbox(runSteps, new SandboxFunction(this, 'Sandbox'));

    const tasks = [runSteps, settleAttempt, recordOutcome];
    for (const fn of tasks) {
      fn.addEnvironment(ENV.maxAttempts, String(maxAttempts));
      fn.addEnvironment(ENV.attemptTimeoutSeconds, String(attemptTimeoutSeconds));
      // Attempt and span items (RunSteps) expire with the window.
      fn.addEnvironment(ENV.spanRetentionSeconds, String(spanRetentionSeconds));
    }
    // Whoever records an outcome announces it: RunSteps a success, RecordOutcome the others.
    bindDeliveries(runSteps, this.deliveryStateMachine);
    bindDeliveries(recordOutcome, this.deliveryStateMachine);

    const functions: WorkflowFunctions = {
      runSteps: runSteps.functionArn,
      settleAttempt: settleAttempt.functionArn,
      recordOutcome: recordOutcome.functionArn,
    };
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineType: StateMachineType.STANDARD,
      // toJsonString, not JSON.stringify: the function ARNs are tokens that must resolve in place.
      definitionBody: DefinitionBody.fromString(Stack.of(this).toJsonString(invocationStateMachine(functions, { attemptTimeoutSeconds, maxAttempts }, Aws.PARTITION))),
      logs: {
        destination: new LogGroup(this, 'Logs', { retention: RetentionDays.THREE_MONTHS }),
        level: LogLevel.ALL,
        // State inputs and outputs may carry prompts and errors quoting them; the events suffice.
        includeExecutionData: false,
      },
      tracingEnabled: true,
    });
    this.stateMachine.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['lambda:InvokeFunction'],
        resources: tasks.flatMap((fn) => [fn.functionArn, `${fn.functionArn}:*`]),
      }),
    );

    // An execution that ends without RecordOutcome (stopped, failed past the catches, timed
    // out, out of history) still ends its invocation: its status change goes to a small
    // function that records it `interrupted` and releases the session.
    const settleExecution = bookkeeping('SettleExecution', 'settle-execution', 'Settles an invocation its execution left running');
    settleExecution.addEnvironment(ENV.maxAttempts, String(maxAttempts));
    settleExecution.addEnvironment(ENV.attemptTimeoutSeconds, String(attemptTimeoutSeconds));
    bindDeliveries(settleExecution, this.deliveryStateMachine);
    const undelivered = new Queue(this, 'SettleExecutionDeadLetters', {
      enforceSSL: true,
      encryption: QueueEncryption.SQS_MANAGED,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(undelivered).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is itself the dead-letter queue of the settle rule target.',
    });
    new Rule(this, 'ExecutionEnded', {
      description: 'Invocation executions that ended without recording their outcome',
      eventPattern: {
        source: ['aws.states'],
        detailType: [EXECUTION_STATUS_CHANGE],
        // The invocation machine's only: a delivery that runs out of tries has nothing to settle.
        detail: { stateMachineArn: [this.stateMachine.stateMachineArn], status: [...UNSETTLED_EXECUTION_STATUSES] },
      },
      targets: [new LambdaFunction(settleExecution, { retryAttempts: 185, maxEventAge: Duration.hours(24), deadLetterQueue: undelivered })],
    });

    const role = this.stateMachine.role;
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Log delivery (logs:*LogDelivery*, resource policies) and X-Ray tracing support no resource-level permissions.',
    });
    for (const fn of tasks) {
      Validations.of(role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${logicalId(fn)}.Arn>:*]`,
        reason: 'Lets the state machine invoke versions and aliases of its own task function, and nothing else.',
      });
    }
  }
}

function integerIn(name: string, value: number, min: number, max = Infinity): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Infinity ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new Error(`${name} must be an integer ${range}, got ${value}`);
  }
  return value;
}
