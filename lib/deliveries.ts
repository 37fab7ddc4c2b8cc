import { Aws, Duration, Stack, Validations } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { DELIVER_TIMEOUT_SECONDS, deliveryStateMachine } from '#functions/workflow/definition';
import { ENV } from '#kit/env';
import { bindPayloads, bindSecrets, bindTable, ServiceFunction } from './service-function';

/** Properties of {@link Deliveries}. */
export interface DeliveriesProps {
  readonly table: Table;
  readonly payloads: Bucket;
  /** Secrets Manager name prefix of the organization secrets, webhook signing secrets among them. */
  readonly secretPrefix: string;
  /** Seconds spans are kept after their invocation started: the OTLP export reads them and must judge expiry itself. */
  readonly spanRetentionSeconds: number;
}

/**
 * The delivery state machine (`functions/workflow/definition.ts`, the same ASL the local
 * cloud runs) and its one task function, which sends an invocation's outcome to a webhook
 * or to the organization's OTLP export. Whoever records an outcome starts an execution
 * (`bindDeliveries`); the machine retries each try with backoff for over an hour.
 *
 * The function runs outside any VPC, as RunSteps does: it reaches customer URLs on the
 * internet. Its role holds no Step Functions or Lambda permission.
 */
export class Deliveries extends Construct {
  readonly stateMachine: StateMachine;

  constructor(scope: Construct, id: string, props: DeliveriesProps) {
    super(scope, id);

    const deliver = new ServiceFunction(this, 'Deliver', {
      entry: 'functions/workflow/deliver.ts',
      description: 'Delivery task: send an outcome to a webhook or the OTLP export',
      timeout: Duration.seconds(DELIVER_TIMEOUT_SECONDS),
    });
    // Reads webhooks, export settings and the invocation's trace; writes the try counter and the delivery log.
    bindTable(deliver, props.table, 'read');
    bindTable(deliver, props.table, 'write');
    bindPayloads(deliver, props.payloads, 'read');
    // Webhook signing secrets and the export's header secrets, both below the prefix.
    bindSecrets(deliver, props.secretPrefix, 'read');
    deliver.addEnvironment(ENV.spanRetentionSeconds, String(props.spanRetentionSeconds));

    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineType: StateMachineType.STANDARD,
      // toJsonString, not JSON.stringify: the function ARN is a token that must resolve in place.
      definitionBody: DefinitionBody.fromString(Stack.of(this).toJsonString(deliveryStateMachine({ deliver: deliver.functionArn }, Aws.PARTITION))),
      logs: {
        destination: new LogGroup(this, 'Logs', { retention: RetentionDays.THREE_MONTHS }),
        level: LogLevel.ALL,
        // Inputs name webhook URLs and outputs quote receivers' answers; the events suffice.
        includeExecutionData: false,
      },
      tracingEnabled: true,
    });
    // The definition invokes the unqualified function, so no version or alias needs the grant.
    this.stateMachine.addToRolePolicy(
      new PolicyStatement({ effect: Effect.ALLOW, actions: ['lambda:InvokeFunction'], resources: [deliver.functionArn] }),
    );
    Validations.of(this.stateMachine.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Log delivery (logs:*LogDelivery*, resource policies) and X-Ray tracing support no resource-level permissions.',
    });
  }
}
