import { Annotations, type App, CfnOutput, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { DEFAULT_MODEL_CATALOGUE, parseModelCatalogue } from '#kit/config';
import { routes } from '#functions/routes';
import { ENV } from '#kit/env';
import { Api } from './api';
import { Auth } from './auth';
import { Console } from './console';
import { Observability } from './observability';
import { Payloads } from './payloads';
import { ServiceTable } from './table';
import { Workflow } from './workflow';

/** Properties of a {@link ServiceStack}. */
export interface ServiceStackProps extends StackProps {
  /** Addresses holding a founder invite until they belong to an organization. */
  readonly founderEmails: readonly string[];
  /** Invocations an organization may start during the private beta. */
  readonly invocationQuota: number;
  /** `provider/name` entries, comma-separated, offered by `GET /models`; the functions' default when absent. */
  readonly modelCatalogue?: string;
  /** Protect the table against deletion; switch off only for throwaway stacks. */
  readonly tableDeletionProtection: boolean;
  /** Secrets Manager name prefix of the organization secrets, owned by this deployment. */
  readonly secretPrefix: string;
  /** Seconds one RunSteps slice may run (1..900); {@link Workflow}'s default when absent. */
  readonly attemptTimeoutSeconds?: number;
  /** Attempts an invocation may make before it fails; {@link Workflow}'s default when absent. */
  readonly maxAttempts?: number;
  /**
   * Days spans, attempts and payloads are kept after their invocation started: the S3
   * lifecycle rule and every function's SPAN_RETENTION_SECONDS.
   * @default 90
   */
  readonly spanRetentionDays?: number;
  /**
   * Failed invocations within five minutes that raise the failed-runs alarm.
   * @default 1
   */
  readonly failedRunsAlarmThreshold?: number;
  /**
   * The hosted sign-in's Cognito domain prefix (`https://<prefix>.auth.<region>.amazoncognito.com`),
   * unique within the region.
   * @default the stack name and the account, e.g. `agentsessionservice-123456789012`
   */
  readonly consoleDomainPrefix?: string;
}

/** The span retention the interface spec names (90 days). */
const DEFAULT_SPAN_RETENTION_DAYS = 90;

const DEFAULT_STACK_NAME = 'AgentSessionService';

/** Secret names may hold letters, digits and `/_+=.@-`; the prefix must too. */
const SECRET_PREFIX_PATTERN = /^[A-Za-z0-9/_+=.@-]+$/;

/** Cognito domain prefixes: lowercase letters, digits and inner hyphens, at most 63 characters. */
const DOMAIN_PREFIX_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Words Cognito refuses in a domain prefix. */
const RESERVED_DOMAIN_WORDS = /aws|amazon|cognito/g;

/** The whole service in one stack: API and functions, workflow, table, payload bucket, user pool, web console. */
export class ServiceStack extends Stack {
  /**
   * The stack as `cdk deploy -c name=value` describes it: `stackName`, `founderEmails`,
   * `invocationQuota`, `modelCatalogue`, `tableDeletionProtection`, `secretPrefix`,
   * `attemptTimeoutSeconds`, `maxAttempts`, `spanRetentionDays`, `failedRunsAlarmThreshold`,
   * `consoleDomainPrefix`.
   */
  static fromContext(app: App): ServiceStack {
    const context = (name: string): unknown => app.node.tryGetContext(name);
    const optionalInteger = (name: string): number | undefined =>
      context(name) === undefined ? undefined : positiveInteger(name, context(name));
    const stackName = optionalString(context('stackName')) ?? DEFAULT_STACK_NAME;
    return new ServiceStack(app, stackName, {
      stackName,
      description: 'Agent Session Service: run configurable AI agents and keep an exact record of what they did.',
      founderEmails: (optionalString(context('founderEmails')) ?? '')
        .split(',')
        .map((email) => email.trim())
        .filter(Boolean),
      invocationQuota: positiveInteger('invocationQuota', context('invocationQuota') ?? 1000),
      modelCatalogue: optionalString(context('modelCatalogue')),
      tableDeletionProtection: boolean('tableDeletionProtection', context('tableDeletionProtection') ?? true),
      secretPrefix: optionalString(context('secretPrefix')) ?? `agent-sessions/${stackName}/`,
      attemptTimeoutSeconds: optionalInteger('attemptTimeoutSeconds'),
      maxAttempts: optionalInteger('maxAttempts'),
      spanRetentionDays: optionalInteger('spanRetentionDays'),
      failedRunsAlarmThreshold: optionalInteger('failedRunsAlarmThreshold'),
      consoleDomainPrefix: optionalString(context('consoleDomainPrefix')),
    });
  }

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);
    if (!SECRET_PREFIX_PATTERN.test(props.secretPrefix)) {
      throw new Error(`secretPrefix "${props.secretPrefix}" may hold only letters, digits and /_+=.@-`);
    }
    if (props.consoleDomainPrefix !== undefined && !isDomainPrefix(props.consoleDomainPrefix)) {
      throw new Error(
        `consoleDomainPrefix "${props.consoleDomainPrefix}" must be 1 to 63 lowercase letters, digits and inner hyphens, without aws, amazon or cognito`,
      );
    }
    if (props.founderEmails.length === 0) {
      Annotations.of(this).addWarningV2(
        'agent-sessions:noFounders',
        'founderEmails is empty: nobody can create the first organization (deploy with -c founderEmails=a@example.com,...).',
      );
    }

    // One window for span items (TTL), attempt items (TTL), payload objects (lifecycle) and reads.
    const spanRetentionDays = props.spanRetentionDays ?? DEFAULT_SPAN_RETENTION_DAYS;
    const { table } = new ServiceTable(this, 'Table', { deletionProtection: props.tableDeletionProtection });
    const { bucket } = new Payloads(this, 'Payloads', { retentionDays: spanRetentionDays });
    const auth = new Auth(this, 'Auth', { domainPrefix: props.consoleDomainPrefix ?? defaultDomainPrefix(this.stackName, this.account) });
    const { stateMachine, deliveryStateMachine } = new Workflow(this, 'Workflow', {
      table,
      payloads: bucket,
      secretPrefix: props.secretPrefix,
      attemptTimeoutSeconds: props.attemptTimeoutSeconds,
      maxAttempts: props.maxAttempts,
      spanRetentionDays,
      // The run route accepts exactly these on bedrock; the role may invoke exactly these.
      bedrockModels: parseModelCatalogue(props.modelCatalogue ?? DEFAULT_MODEL_CATALOGUE)
        .filter((model) => model.provider === 'bedrock')
        .map((model) => model.name),
    });
    // One key per deployment signs every list cursor; only `cursors` routes may read it.
    const cursorKey = new Secret(this, 'CursorKey', {
      description: 'Agent Session Service: the key list cursors are signed with',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });
    Validations.of(cursorKey).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason: 'The cursor key is not rotated automatically: rotating it only invalidates the cursors clients hold, which an operator may do by hand.',
    });
    // The API admits the console's origin (CORS), so it waits for the distribution; the
    // distribution cannot also wait for the API (CloudFormation refuses the cycle), so the
    // console's CSP names this region's API Gateway hosts rather than the API's own.
    const webConsole = new Console(this, 'Console', {
      apiSource: `https://*.execute-api.${this.region}.${this.urlSuffix}`,
      signInOrigin: auth.signInUrl,
    });
    const webClient = auth.addWebClient({ callbackUrl: webConsole.callbackUrl, signOutUrl: webConsole.url });
    const api = new Api(this, 'Api', {
      routes,
      cursorKey,
      table,
      payloads: bucket,
      secretPrefix: props.secretPrefix,
      stateMachine,
      deliveryStateMachine,
      spanRetentionSeconds: spanRetentionDays * 86_400,
      authenticatedEnvironment: {
        [ENV.authIssuer]: auth.issuer,
        [ENV.authAudience]: webClient.userPoolClientId,
        ...(props.founderEmails.length ? { [ENV.founderEmails]: props.founderEmails.join(',') } : {}),
        [ENV.invocationQuota]: String(props.invocationQuota),
        ...(props.modelCatalogue ? { [ENV.modelCatalogue]: props.modelCatalogue } : {}),
      },
      corsOrigin: webConsole.origin,
    });
    webConsole.publish({
      apiUrl: api.httpApi.apiEndpoint,
      signIn: { kind: 'cognito', domain: auth.signInUrl, clientId: webClient.userPoolClientId, redirectUri: webConsole.callbackUrl },
    });

    new CfnOutput(this, 'ApiUrl', { value: api.stage.url, description: 'Base URL of the HTTP API' });
    new CfnOutput(this, 'UserPoolId', { value: auth.userPool.userPoolId });
    new CfnOutput(this, 'UserPoolClientId', { value: webClient.userPoolClientId });
    new CfnOutput(this, 'ConsoleUrl', { value: webConsole.url, description: 'The web console' });
    new CfnOutput(this, 'TableName', { value: table.tableName });
    new CfnOutput(this, 'PayloadBucketName', { value: bucket.bucketName });
    new CfnOutput(this, 'StateMachineArn', { value: stateMachine.stateMachineArn, description: 'The invocation state machine' });
    new CfnOutput(this, 'DeliveryStateMachineArn', {
      value: deliveryStateMachine.stateMachineArn,
      description: 'The delivery state machine: a FAILED execution is a webhook or OTLP delivery that never arrived',
    });

    const observability = new Observability(this, 'Observability', { failedRunsThreshold: props.failedRunsAlarmThreshold ?? 1 });
    new CfnOutput(this, 'DashboardName', { value: observability.dashboard.dashboardName, description: 'CloudWatch dashboard of invocations, tokens, latency and errors' });
  }
}

function isDomainPrefix(prefix: string): boolean {
  return DOMAIN_PREFIX_PATTERN.test(prefix) && !prefix.match(RESERVED_DOMAIN_WORDS);
}

/** `<stack name>-<account>`, made a valid domain prefix: the account keeps it unique across accounts. */
function defaultDomainPrefix(stackName: string, account: string): string {
  const name = stackName
    .toLowerCase()
    .replace(RESERVED_DOMAIN_WORDS, '')
    .replace(/[^a-z0-9]+/g, '-')
    // Room for `-` and a 12-digit account within 63 characters.
    .slice(0, 50)
    .replace(/^-+|-+$/g, '');
  return `${name || 'agent-sessions'}-${account}`;
}

function optionalString(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return String(value);
}

// Values given with -c arrive as strings; values in cdk.json keep their JSON type.
function positiveInteger(name: string, value: unknown): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new Error(`context ${name} must be a positive integer, got "${String(value)}"`);
  return number;
}

function boolean(name: string, value: unknown): boolean {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`context ${name} must be true or false, got "${String(value)}"`);
}
