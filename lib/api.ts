import { Duration, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { CorsHttpMethod, HttpApi, HttpMethod, type HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { Access, Route } from '#functions/routes';
import { ENV } from '#kit/env';
import { bindCursorKey, bindDeliveries, bindPayloads, bindSecrets, bindTable, bindWorkflow, ServiceFunction } from './service-function';

/**
 * The longest a run request waits in one answer: below API Gateway's ~29 s integration
 * limit, leaving time to accept the run before and to answer after.
 */
const WAIT_SLICE_SECONDS = 25;

/** Properties of an {@link Api}. */
export interface ApiProps {
  /** The route table; one API route and one function per entry. */
  readonly routes: readonly Route[];
  readonly table: Table;
  readonly payloads: Bucket;
  /** Secrets Manager name prefix of the organization secrets. */
  readonly secretPrefix: string;
  /** The invocation state machine, which `workflow:*` routes start and stop. */
  readonly stateMachine: StateMachine;
  /** The delivery state machine, which `deliveries:start` routes start. */
  readonly deliveryStateMachine: StateMachine;
  /**
   * Seconds spans are kept after their invocation started. Every table reader gets it:
   * DynamoDB deletes expired items late, so reads must judge expiry themselves.
   */
  readonly spanRetentionSeconds: number;
  /** The key list cursors are signed with, which `cursors` routes read. */
  readonly cursorKey: ISecret;
  /** Variables every route that authenticates its caller needs: token issuer and audience, beta settings. */
  readonly authenticatedEnvironment: Readonly<Record<string, string>>;
  /** The one browser origin that may call the API (the web console's), `https://<host>`. */
  readonly corsOrigin: string;
}

/** Request headers a browser may send beyond the CORS-safelisted ones. */
const CORS_REQUEST_HEADERS = ['authorization', 'content-type', 'idempotency-key'];
/** Response headers a browser script may read beyond the CORS-safelisted ones. */
const CORS_EXPOSED_HEADERS = ['idempotency-key', 'retry-after'];

/**
 * The HTTP API: one route and one function per route table entry. There is no API Gateway
 * authorizer; each function authenticates its caller itself (user bearer tokens and
 * organization API keys alike, which no single authorizer type covers).
 */
export class Api extends Construct {
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;

  constructor(scope: Construct, id: string, props: ApiProps) {
    super(scope, id);
    this.httpApi = new HttpApi(this, 'HttpApi', {
      description: 'Agent Session Service',
      createDefaultStage: false,
      // Callers authenticate with bearer tokens, never cookies: no credentials to allow.
      corsPreflight: {
        allowOrigins: [props.corsOrigin],
        allowMethods: [...new Set(props.routes.map((route) => CorsHttpMethod[route.method]))],
        allowHeaders: CORS_REQUEST_HEADERS,
        exposeHeaders: CORS_EXPOSED_HEADERS,
        maxAge: Duration.hours(1),
      },
    });
    this.stage = this.httpApi.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      // Bounds what an unauthenticated flood can cost: the gateway admits every request to a function.
      throttle: { rateLimit: 100, burstLimit: 200 },
      accessLogSettings: {
        destination: new LogGroupLogDestination(
          new LogGroup(this, 'AccessLogs', { retention: RetentionDays.THREE_MONTHS }),
        ),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            requestTime: '$context.requestTime',
            sourceIp: '$context.identity.sourceIp',
            userAgent: '$context.identity.userAgent',
            routeKey: '$context.routeKey',
            status: '$context.status',
            protocol: '$context.protocol',
            responseLength: '$context.responseLength',
            responseLatency: '$context.responseLatency',
            integrationStatus: '$context.integrationStatus',
            integrationLatency: '$context.integrationLatency',
            integrationError: '$context.integrationErrorMessage',
          }),
        ),
      },
    });

    for (const route of props.routes) {
      const key = `${route.method} ${route.path}`;
      const id = pascalCase(route.handler);
      const fn = new ServiceFunction(this, id, {
        entry: `functions/handlers/${route.handler}.ts`,
        description: key,
        ...(route.timeoutSeconds ? { timeout: Duration.seconds(route.timeoutSeconds) } : {}),
      });
      // Otherwise the function dies mid-wait and the client gets a 500 instead of the slice's 504.
      if (route.access.includes('workflow:start') && fn.timeout!.toSeconds() <= WAIT_SLICE_SECONDS) {
        throw new Error(`${key} waits up to ${WAIT_SLICE_SECONDS} s, so its timeoutSeconds must exceed that`);
      }
      bindAccess(fn, route.access, props);
      if (route.auth !== 'none') {
        for (const [name, value] of Object.entries(props.authenticatedEnvironment)) fn.addEnvironment(name, value);
      }

      const [httpRoute] = this.httpApi.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${id}Integration`, fn),
      });
      Validations.of(httpRoute!).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          route.auth === 'none'
            ? `${key} is public by design.`
            : `${key} is authenticated by its function (auth "${route.auth}"): it verifies Cognito ID tokens against the pool's issuer and audience, and organization API keys against their stored hashes, which no API Gateway authorizer type covers together.`,
      });
    }
  }
}

/** Grants `fn` exactly what its route's access list names, and the configuration that goes with it. */
function bindAccess(fn: ServiceFunction, access: readonly Access[], props: ApiProps): void {
  const binders: Record<Access, () => void> = {
    'table:read': () => {
      bindTable(fn, props.table, 'read');
      fn.addEnvironment(ENV.spanRetentionSeconds, String(props.spanRetentionSeconds));
    },
    'table:write': () => bindTable(fn, props.table, 'write'),
    'payloads:read': () => bindPayloads(fn, props.payloads, 'read'),
    'payloads:write': () => bindPayloads(fn, props.payloads, 'write'),
    'secrets:read': () => bindSecrets(fn, props.secretPrefix, 'read'),
    'secrets:write': () => bindSecrets(fn, props.secretPrefix, 'write'),
    'workflow:start': () => {
      bindWorkflow(fn, props.stateMachine, 'start');
      fn.addEnvironment(ENV.waitSliceSeconds, String(WAIT_SLICE_SECONDS));
    },
    'workflow:stop': () => bindWorkflow(fn, props.stateMachine, 'stop'),
    'deliveries:start': () => bindDeliveries(fn, props.deliveryStateMachine),
    cursors: () => bindCursorKey(fn, props.cursorKey),
  };
  for (const entry of access) binders[entry]();
}

/** `get-health` -> `GetHealth`, a construct id that keeps logical ids readable. */
function pascalCase(name: string): string {
  return name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
