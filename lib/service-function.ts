import { fileURLToPath } from 'node:url';
import { ArnFormat, type CfnElement, Duration, Stack, Validations } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { ENV } from '#kit/env';
import { bundling } from './bundling';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));

/** Properties of a {@link ServiceFunction}. */
export interface ServiceFunctionProps {
  /** Entry module relative to the project root, e.g. `functions/handlers/get-health.ts`. */
  readonly entry: string;
  /** Shown in the console next to the generated function name. */
  readonly description?: string;
  /** @default 10 seconds */
  readonly timeout?: Duration;
  /** @default 1024 MB */
  readonly memorySize?: number;
}

/**
 * A Lambda function built the one way every service function is built: Node.js 22 on
 * arm64, active X-Ray tracing, its own log group with a retention, an ESM bundle that
 * carries its own AWS SDK, and a role that may write only to that log group until a
 * `bind*` helper grants more.
 */
export class ServiceFunction extends NodejsFunction {
  /** The function's own role, always present (the base class types it as optional). */
  declare readonly role: Role;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    // Created beside the function because the function needs both at construction. An
    // own role instead of the default one: AWSLambdaBasicExecutionRole would let the
    // function write to every log group of the account.
    const logGroup = new LogGroup(scope, `${id}Logs`, { retention: RetentionDays.THREE_MONTHS });
    const role = new Role(scope, `${id}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    logGroup.grantWrite(role);

    super(scope, id, {
      entry: `${projectRoot}${props.entry}`,
      projectRoot,
      depsLockFilePath: `${projectRoot}package-lock.json`,
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      // More memory buys proportionally more CPU, which shortens cold starts of the bundle.
      memorySize: props.memorySize ?? 1024,
      timeout: props.timeout ?? Duration.seconds(10),
      tracing: Tracing.ACTIVE,
      logGroup,
      role,
      environment: { NODE_OPTIONS: '--enable-source-maps' },
      bundling: {
        ...bundling,
        format: OutputFormat.ESM,
        mainFields: [...bundling.mainFields],
        externalModules: [...bundling.externalModules],
      },
    });

    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason: 'Functions target nodejs22.x on purpose: the contract pins it, and the local cloud runs the same code on Node 20/22.',
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Active X-Ray tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions.',
    });
  }
}

/** Lets `fn` read (`read`) or write (`write`) items of `table` and tells it the table's name. */
export function bindTable(fn: ServiceFunction, table: Table, mode: 'read' | 'write'): void {
  if (mode === 'read') table.grantReadData(fn);
  else table.grantWriteData(fn);
  fn.addEnvironment(ENV.tableName, table.tableName);
  Validations.of(fn.role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${logicalId(table)}.Arn>/index/*]`,
    // Matters once tableSchema declares indexes: CDK then grants on `<table>/index/*` too.
    reason: "Queries may use any global secondary index of the service table; the wildcard covers only that table's indexes.",
  });
}

/** Lets `fn` read (`read`) or write, list and delete (`write`) payload objects and tells it the bucket's name. */
export function bindPayloads(fn: ServiceFunction, bucket: Bucket, mode: 'read' | 'write'): void {
  if (mode === 'read') {
    fn.addToRolePolicy(
      new PolicyStatement({ effect: Effect.ALLOW, actions: ['s3:GetObject'], resources: [bucket.arnForObjects('*')] }),
    );
    // ListBucket backs HeadBucket (the health check) and turns a missing key into 404, not 403.
    fn.addToRolePolicy(
      new PolicyStatement({ effect: Effect.ALLOW, actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }),
    );
  } else {
    fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['s3:PutObject', 's3:DeleteObject'],
        resources: [bucket.arnForObjects('*')],
      }),
    );
    // Deleting an invocation's objects lists them by prefix first.
    fn.addToRolePolicy(
      new PolicyStatement({ effect: Effect.ALLOW, actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }),
    );
  }
  fn.addEnvironment(ENV.payloadBucket, bucket.bucketName);
  Validations.of(fn.role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${logicalId(bucket)}.Arn>/*]`,
    reason: 'Payload keys are created at run time per organization and session; the wildcard covers only objects of the payload bucket.',
  });
}

/**
 * Lets `fn` read values of (`read`) or create, rotate and delete (`write`) the organization
 * secrets stored under `prefix`, and tells it the prefix.
 */
export function bindSecrets(fn: ServiceFunction, prefix: string, mode: 'read' | 'write'): void {
  // Readers only fetch values: whether a secret exists is answered by its table item.
  const actions =
    mode === 'read'
      ? ['secretsmanager:GetSecretValue']
      : [
          'secretsmanager:CreateSecret',
          'secretsmanager:PutSecretValue',
          'secretsmanager:DeleteSecret',
          'secretsmanager:DescribeSecret',
          'secretsmanager:TagResource',
        ];
  fn.addToRolePolicy(new PolicyStatement({ effect: Effect.ALLOW, actions, resources: [secretsArn(fn, prefix)] }));
  fn.addEnvironment(ENV.secretPrefix, prefix);
  Validations.of(fn.role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${prefix}*]`,
    reason: `Organization secrets are created at run time under the deployment's prefix "${prefix}"; the wildcard covers only names below it (and the random suffix Secrets Manager appends).`,
  });
}

/**
 * Lets `fn` start executions of `stateMachine` (`start`) or stop and describe them (`stop`),
 * and tells it the machine's ARN.
 */
export function bindWorkflow(fn: ServiceFunction, stateMachine: StateMachine, mode: 'start' | 'stop'): void {
  if (mode === 'start') {
    fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['states:StartExecution'],
        resources: [stateMachine.stateMachineArn],
      }),
    );
  } else {
    // Executions are named per invocation at run time, so only a pattern can name them.
    const executions = Stack.of(fn).formatArn({
      service: 'states',
      resource: 'execution',
      resourceName: `${stateMachine.stateMachineName}:*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['states:StopExecution', 'states:DescribeExecution'],
        resources: [executions],
      }),
    );
    Validations.of(fn.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:<${logicalId(stateMachine)}.Name>:*]`,
      reason: 'Execution names derive from invocation keys at run time; the wildcard covers only executions of the invocation state machine.',
    });
  }
  fn.addEnvironment(ENV.stateMachineArn, stateMachine.stateMachineArn);
}

/**
 * Lets `fn` start executions of the delivery state machine, nothing more, and tells it the
 * machine's ARN: every function that records an invocation's outcome announces it this way.
 */
export function bindDeliveries(fn: ServiceFunction, stateMachine: StateMachine): void {
  fn.addToRolePolicy(
    new PolicyStatement({ effect: Effect.ALLOW, actions: ['states:StartExecution'], resources: [stateMachine.stateMachineArn] }),
  );
  fn.addEnvironment(ENV.deliveryStateMachineArn, stateMachine.stateMachineArn);
}

/** Lets `fn` read the deployment's cursor signing key, that one secret only, and tells it the secret. */
export function bindCursorKey(fn: ServiceFunction, cursorKey: ISecret): void {
  fn.addToRolePolicy(
    new PolicyStatement({ effect: Effect.ALLOW, actions: ['secretsmanager:GetSecretValue'], resources: [cursorKey.secretArn] }),
  );
  fn.addEnvironment(ENV.cursorKeySecretId, cursorKey.secretArn);
}

/** Geographies of Bedrock's system-defined cross-region inference profiles (`us.anthropic.claude-…`). */
const INFERENCE_PROFILE = /^(?:us|us-gov|eu|apac|jp|au|ca|global)\.(.+)$/;

/**
 * Lets `fn` call Converse (`bedrock:InvokeModel`) on exactly the Bedrock `models` and no
 * other: a foundation model id in the stack's region; a cross-region inference profile id
 * on that profile, and on its foundation model in whichever region the profile routes to,
 * but only through that profile.
 */
export function bindBedrockModels(fn: ServiceFunction, models: readonly string[]): void {
  const stack = Stack.of(fn);
  const invoke = (resources: string[], conditions?: Record<string, Record<string, string>>) =>
    fn.addToRolePolicy(new PolicyStatement({ effect: Effect.ALLOW, actions: ['bedrock:InvokeModel'], resources, ...(conditions ? { conditions } : {}) }));
  const foundationModels = models.filter((id) => !INFERENCE_PROFILE.test(id));
  if (foundationModels.length) invoke(foundationModels.map((id) => `arn:${stack.partition}:bedrock:${stack.region}::foundation-model/${id}`));
  for (const id of models) {
    const model = INFERENCE_PROFILE.exec(id)?.[1];
    if (!model) continue;
    const profile = `arn:${stack.partition}:bedrock:${stack.region}:${stack.account}:inference-profile/${id}`;
    invoke([profile]);
    invoke([`arn:${stack.partition}:bedrock:*::foundation-model/${model}`], { StringEquals: { 'bedrock:InferenceProfileArn': profile } });
    Validations.of(fn.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/${model}]`,
      reason: `The inference profile ${id} routes to ${model} in Regions Bedrock picks (empty for global profiles); the grant holds only for calls made through that profile.`,
    });
  }
}

/** ARN pattern of every secret whose name starts with `prefix`. */
function secretsArn(scope: Construct, prefix: string): string {
  const stack = Stack.of(scope);
  return `arn:${stack.partition}:secretsmanager:${stack.region}:${stack.account}:secret:${prefix}*`;
}

/** The CloudFormation logical id of an L2 construct's resource, as cdk-nag names it in findings. */
export function logicalId(construct: Construct): string {
  return Stack.of(construct).getLogicalId(construct.node.defaultChild as CfnElement);
}
