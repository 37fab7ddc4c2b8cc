import { Match, type Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes as routeTable, type Access, type Route } from '#functions/routes';
import { synthesize } from './synth';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

const TABLE_WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];
const SECRETS_WRITE_ACTIONS = [
  'secretsmanager:CreateSecret',
  'secretsmanager:DeleteSecret',
  'secretsmanager:DescribeSecret',
  'secretsmanager:PutSecretValue',
  'secretsmanager:TagResource',
];
const SECRETS_ARN = {
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':secretsmanager:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      ':secret:agent-sessions/AgentSessionService/*',
    ],
  ],
};

// Widened so each entry's access list reads as Access[] rather than its literal tuple.
const routes: readonly Route[] = routeTable;

const keyOf = (route: Route) => `${route.method} ${route.path}`;
const routeByHandler = (handler: string) => routes.find((route) => route.handler === handler)!;
const actionsOf = (statements: Statement[]) => statements.flatMap((statement) => [statement.Action].flat());
const has = (route: Route, prefix: string) => route.access.some((access: Access) => access.startsWith(prefix));

/** The function described as `description` (a route key, or a workflow task's): its logical id and properties. */
function functionBy(template: Template, description: string): { id: string; properties: Record<string, any> } {
  const found = Object.entries(template.findResources('AWS::Lambda::Function', { Properties: { Description: description } }));
  expect(found, description).toHaveLength(1);
  const [id, resource] = found[0]!;
  return { id, properties: resource.Properties };
}

/** The function serving `route`. */
const functionOf = (template: Template, route: Route) => functionBy(template, keyOf(route));

/** Every IAM statement attached to the role `roleArn` (a `Fn::GetAtt` of it) names. */
function statementsOfRole(template: Template, roleArn: { 'Fn::GetAtt': [string, string] }): Statement[] {
  const roleId = roleArn['Fn::GetAtt'][0];
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) => policy.Properties.Roles.some((role: unknown) => JSON.stringify(role) === JSON.stringify({ Ref: roleId })))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement);
}

/** Every IAM statement attached to the role of `route`'s function. */
const statementsOf = (template: Template, route: Route) => statementsOfRole(template, functionOf(template, route).properties.Role);

const TASK_DESCRIPTIONS = {
  runSteps: 'Workflow task: run agent steps of the open attempt',
  settleAttempt: 'Workflow task: classify a failed attempt',
  recordOutcome: "Workflow task: record the invocation's outcome",
};
const BOOKKEEPING_TASKS = ['settleAttempt', 'recordOutcome'] as const;
const SANDBOX_DESCRIPTION = 'Terminal tool sandbox: runs one command, with no permissions';

const DELIVER_DESCRIPTION = 'Delivery task: send an outcome to a webhook or the OTLP export';

interface Definition {
  StartAt: string;
  States: Record<string, Record<string, any>>;
}

/**
 * A state machine's definition, each function ARN (`Fn::GetAtt`) written as `<LogicalId>`
 * and the partition (`Ref: AWS::Partition`) as `aws`.
 */
function renderDefinition(properties: Record<string, any>): Definition {
  const [, parts] = properties.DefinitionString['Fn::Join'] as [string, unknown[]];
  const render = (part: unknown) => {
    if (typeof part === 'string') return part;
    const token = part as { 'Fn::GetAtt'?: [string, 'Arn']; Ref?: string };
    if (token.Ref === 'AWS::Partition') return 'aws';
    return `<${token['Fn::GetAtt']![0]}>`;
  };
  const json = parts.map(render).join('');
  return JSON.parse(json);
}

/**
 * The state machine whose definition starts at `startAt`, the invocation machine (`RunSteps`)
 * unless told: its logical id and properties.
 */
function stateMachineOf(template: Template, startAt: 'RunSteps' | 'Deliver' = 'RunSteps'): { id: string; properties: Record<string, any> } {
  const found = Object.entries(template.findResources('AWS::StepFunctions::StateMachine')).filter(
    ([, resource]) => renderDefinition(resource.Properties).StartAt === startAt,
  );
  expect(found, startAt).toHaveLength(1);
  const [id, resource] = found[0]!;
  return { id, properties: resource.Properties };
}

/** The definition of the state machine starting at `startAt` (the invocation machine unless told), as {@link renderDefinition} writes it. */
const definitionOf = (template: Template, startAt: 'RunSteps' | 'Deliver' = 'RunSteps'): Definition =>
  renderDefinition(stateMachineOf(template, startAt).properties);

/** The resources of every `states:StartExecution` statement among `statements`, as comparable text. */
const startableBy = (statements: Statement[]): Set<string> =>
  new Set(
    statements
      .filter((statement) => actionsOf([statement]).includes('states:StartExecution'))
      .flatMap((statement) => [statement.Resource].flat().map((resource) => JSON.stringify(resource))),
  );

describe('ServiceStack', () => {
  let template: Template;
  let app: ReturnType<typeof synthesize>['app'];

  beforeAll(() => {
    ({ template, app } = synthesize({ founderEmails: 'founder@example.com' }));
  });

  describe('API', () => {
    it('has one route per route table entry', () => {
      template.resourceCountIs('AWS::ApiGatewayV2::Route', routes.length);
      for (const route of routes) {
        template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: keyOf(route), AuthorizationType: 'NONE' });
      }
    });

    it('integrates each route with its own function through payload format 2.0', () => {
      const targets = new Set(routes.map((route) => functionOf(template, route).id));
      expect(targets.size).toBe(routes.length);
      template.resourceCountIs('AWS::ApiGatewayV2::Integration', routes.length);
      template.allResourcesProperties('AWS::ApiGatewayV2::Integration', {
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '2.0',
      });
    });

    it('logs access to a log group', () => {
      template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
        StageName: '$default',
        AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('\\$context\\.requestId') },
      });
    });
  });

  describe('functions', () => {
    it('all run Node.js 22 on arm64 with active tracing and source maps', () => {
      // The terminal tool's sandbox may not even log or trace (sandbox.test.ts); CDK's
      // BucketDeployment handler, in Python, publishes the web console (console.test.ts).
      const serviceFunctions = Object.entries(template.findResources('AWS::Lambda::Function')).filter(
        ([id, resource]) => resource.Properties.Description !== SANDBOX_DESCRIPTION && !id.startsWith('CustomCDKBucketDeployment'),
      );
      expect(serviceFunctions.length).toBeGreaterThan(routes.length);
      for (const [id, resource] of serviceFunctions) {
        expect(resource.Properties, id).toMatchObject({
          Runtime: 'nodejs22.x',
          Architectures: ['arm64'],
          TracingConfig: { Mode: 'Active' },
          Environment: { Variables: expect.objectContaining({ NODE_OPTIONS: '--enable-source-maps' }) },
          LoggingConfig: { LogGroup: expect.anything() },
        });
      }
    });

    it('log to groups with a retention', () => {
      template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
    });

    it('use roles without managed policies', () => {
      for (const role of Object.values(template.findResources('AWS::IAM::Role'))) {
        expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      }
    });

    it('get configuration only for what their route may touch', () => {
      for (const route of routes) {
        const variables = Object.keys(functionOf(template, route).properties.Environment.Variables);
        expect(variables.includes('TABLE_NAME'), keyOf(route)).toBe(has(route, 'table:'));
        expect(variables.includes('PAYLOAD_BUCKET'), keyOf(route)).toBe(has(route, 'payloads:'));
        expect(variables.includes('SECRET_PREFIX'), keyOf(route)).toBe(has(route, 'secrets:'));
        expect(variables.includes('STATE_MACHINE_ARN'), keyOf(route)).toBe(has(route, 'workflow:'));
        expect(variables.includes('DELIVERY_STATE_MACHINE_ARN'), keyOf(route)).toBe(route.access.includes('deliveries:start'));
        expect(variables.includes('WAIT_SLICE_SECONDS'), keyOf(route)).toBe(route.access.includes('workflow:start'));
        expect(variables.includes('SPAN_RETENTION_SECONDS'), keyOf(route)).toBe(route.access.includes('table:read'));
        for (const name of ['AUTH_ISSUER', 'AUTH_AUDIENCE', 'FOUNDER_EMAILS', 'INVOCATION_QUOTA']) {
          expect(variables.includes(name), `${keyOf(route)} ${name}`).toBe(route.auth !== 'none');
        }
      }
    });

    it('verify tokens against the user pool issuer and the client audience', () => {
      const variables = functionOf(template, routeByHandler('get-whoami')).properties.Environment.Variables;
      const [poolId] = Object.keys(template.findResources('AWS::Cognito::UserPool'));
      const [clientId] = Object.keys(template.findResources('AWS::Cognito::UserPoolClient'));
      expect(variables.AUTH_ISSUER).toEqual({
        'Fn::Join': ['', ['https://cognito-idp.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }, '/', { Ref: poolId }]],
      });
      expect(variables.AUTH_AUDIENCE).toEqual({ Ref: clientId });
      expect(variables.FOUNDER_EMAILS).toBe('founder@example.com');
      expect(variables.INVOCATION_QUOTA).toBe('1000');
      expect(variables.MODEL_CATALOGUE).toBeUndefined();
    });
  });

  describe('IAM', () => {
    it('create-secret manages secrets only below the deployment prefix', () => {
      const statements = statementsOf(template, routeByHandler('create-secret'));
      const secrets = statements.filter((statement) => actionsOf([statement]).some((action) => action.startsWith('secretsmanager:')));
      expect(secrets.length).toBeGreaterThan(0);
      for (const statement of secrets) expect(statement.Resource).toEqual(SECRETS_ARN);
      expect(new Set(actionsOf(secrets))).toEqual(new Set(SECRETS_WRITE_ACTIONS));
    });

    it('run-session may start executions of the two state machines, and touch no secret', () => {
      const route = routeByHandler('run-session');
      const statements = statementsOf(template, route);
      const { id: machineId } = stateMachineOf(template);
      const { id: deliveryId } = stateMachineOf(template, 'Deliver');
      // One statement or two: CDK merges statements of one action (minimizePolicies).
      expect(startableBy(statements)).toEqual(new Set([JSON.stringify({ Ref: machineId }), JSON.stringify({ Ref: deliveryId })]));
      expect(actionsOf(statements).filter((action) => action.startsWith('secretsmanager:') || action.startsWith('lambda:'))).toEqual([]);
      const { properties } = functionOf(template, route);
      expect(properties.Environment.Variables).toMatchObject({
        STATE_MACHINE_ARN: { Ref: machineId },
        DELIVERY_STATE_MACHINE_ARN: { Ref: deliveryId },
        WAIT_SLICE_SECONDS: '25',
      });
      // The function outlives its wait slice, so a long wait ends in the slice's answer, not a timeout.
      expect(properties.Timeout).toBeGreaterThan(25);
    });

    it('get-trace may read payloads but write none, and list-traces touches no payload', () => {
      const trace = actionsOf(statementsOf(template, routeByHandler('get-trace')));
      expect(trace).toContain('s3:GetObject');
      expect(trace.filter((action) => /^s3:(Put|Delete)/.test(action) || action.startsWith('secretsmanager:Create'))).toEqual([]);
      const list = actionsOf(statementsOf(template, routeByHandler('list-traces')));
      expect(list.filter((action) => action.startsWith('s3:'))).toEqual([]);
    });

    it('get-whoami may touch no secret and no payload', () => {
      const actions = actionsOf(statementsOf(template, routeByHandler('get-whoami')));
      expect(actions.filter((action) => action.startsWith('secretsmanager:') || action.startsWith('s3:'))).toEqual([]);
    });

    it('get-health may read the table and the bucket but write nothing', () => {
      const actions = actionsOf(statementsOf(template, routeByHandler('get-health')));
      expect(actions).toContain('dynamodb:GetItem');
      expect(actions).toContain('s3:ListBucket');
      expect(actions.filter((action) => TABLE_WRITE_ACTIONS.includes(action) || /^s3:(Put|Delete)/.test(action))).toEqual([]);
    });

    it('lets get-openapi touch nothing but its own logs and traces, and tells it nothing', () => {
      const route = routeByHandler('get-openapi');
      const actions = actionsOf(statementsOf(template, route));
      expect(actions.length).toBeGreaterThan(0);
      expect(actions.filter((action) => !/^(logs|xray):/.test(action))).toEqual([]);
      expect(Object.keys(functionOf(template, route).properties.Environment.Variables)).toEqual(['NODE_OPTIONS']);
    });

    it('lets exactly the cursors routes read the generated cursor key, that one secret only', () => {
      const [secretId, secret] = Object.entries(template.findResources('AWS::SecretsManager::Secret'))[0]!;
      expect(secret.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 64 });
      for (const route of routes) {
        const readsKey = statementsOf(template, route).some(
          (statement) => JSON.stringify(statement.Resource) === JSON.stringify({ Ref: secretId }),
        );
        expect(readsKey, keyOf(route)).toBe(route.access.includes('cursors'));
        const variables = functionOf(template, route).properties.Environment.Variables;
        expect(variables.CURSOR_KEY_SECRET_ID, keyOf(route)).toEqual(route.access.includes('cursors') ? { Ref: secretId } : undefined);
      }
      const cursorRoutes = routes.filter((route) => route.access.includes('cursors'));
      expect(cursorRoutes.length).toBeGreaterThan(0);
      for (const route of cursorRoutes) {
        const statement = statementsOf(template, route).find((candidate) => JSON.stringify(candidate.Resource) === JSON.stringify({ Ref: secretId }));
        expect(statement).toEqual({ Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: { Ref: secretId } });
      }
    });

    it('lets payloads:write routes list the bucket to delete by prefix', () => {
      for (const route of routes.filter((candidate) => candidate.access.includes('payloads:write'))) {
        const actions = actionsOf(statementsOf(template, route));
        expect(actions, keyOf(route)).toEqual(expect.arrayContaining(['s3:ListBucket', 's3:DeleteObject']));
      }
    });

    it('grants every function exactly the kinds of access its route lists', () => {
      for (const route of routes) {
        const actions = actionsOf(statementsOf(template, route));
        const tableWrites = actions.some((action) => TABLE_WRITE_ACTIONS.includes(action));
        expect(tableWrites, keyOf(route)).toBe(route.access.includes('table:write'));
        expect(actions.includes('dynamodb:Query'), keyOf(route)).toBe(route.access.includes('table:read'));
        expect(actions.includes('s3:GetObject'), keyOf(route)).toBe(route.access.includes('payloads:read'));
        expect(actions.includes('s3:PutObject'), keyOf(route)).toBe(route.access.includes('payloads:write'));
        expect(actions.includes('secretsmanager:GetSecretValue'), keyOf(route)).toBe(
          route.access.includes('secrets:read') || route.access.includes('cursors'),
        );
        expect(actions.includes('secretsmanager:CreateSecret'), keyOf(route)).toBe(route.access.includes('secrets:write'));
        expect(actions.includes('states:StartExecution'), keyOf(route)).toBe(
          route.access.includes('workflow:start') || route.access.includes('deliveries:start'),
        );
        expect(actions.includes('states:StopExecution'), keyOf(route)).toBe(route.access.includes('workflow:stop'));
      }
    });
  });

  describe('workflow', () => {
    it('is a STANDARD state machine, traced, logging events without execution data', () => {
      const { properties } = stateMachineOf(template);
      expect(properties.StateMachineType).toBe('STANDARD');
      expect(properties.TracingConfiguration).toEqual({ Enabled: true });
      expect(properties.LoggingConfiguration).toMatchObject({ Level: 'ALL', IncludeExecutionData: false });
    });

    it('runs the shared definition with each task on its own function and timeout', () => {
      const definition = definitionOf(template);
      const tasks = Object.fromEntries(
        Object.entries(definition.States).filter(([, state]) => state.Type === 'Task'),
      );
      expect(definition.StartAt).toBe('RunSteps');
      expect(Object.keys(tasks).sort()).toEqual(['RecordOutcome', 'RunSteps', 'SettleAttempt']);
      const expected = {
        RunSteps: [TASK_DESCRIPTIONS.runSteps, 900],
        SettleAttempt: [TASK_DESCRIPTIONS.settleAttempt, 60],
        RecordOutcome: [TASK_DESCRIPTIONS.recordOutcome, 60],
      } as const;
      for (const [name, [description, timeout]] of Object.entries(expected)) {
        expect(tasks[name]!.Resource, name).toBe('arn:aws:states:::lambda:invoke');
        expect(tasks[name]!.Parameters.FunctionName, name).toBe(`<${functionBy(template, description).id}>`);
        expect(tasks[name]!.TimeoutSeconds, name).toBe(timeout);
      }
    });

    it('hands executions that end unsettled to the settle function, with retries and a dead-letter queue', () => {
      const rules = Object.values(template.findResources('AWS::Events::Rule'));
      expect(rules).toHaveLength(1);
      const rule = rules[0]!.Properties;
      expect(rule.EventPattern).toEqual({
        source: ['aws.states'],
        'detail-type': ['Step Functions Execution Status Change'],
        detail: { stateMachineArn: [{ Ref: stateMachineOf(template).id }], status: ['FAILED', 'TIMED_OUT', 'ABORTED'] },
      });
      const settle = functionBy(template, 'Settles an invocation its execution left running');
      expect(rule.Targets).toEqual([
        expect.objectContaining({
          Arn: { 'Fn::GetAtt': [settle.id, 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86_400 },
          DeadLetterConfig: { Arn: expect.objectContaining({ 'Fn::GetAtt': [expect.stringMatching(/SettleExecutionDeadLetters/), 'Arn'] }) },
        }),
      ]);
      // The table, and starting deliveries of the outcome it records: no bucket, secrets or other function.
      const statements = statementsOfRole(template, settle.properties.Role);
      const actions = actionsOf(statements);
      expect(actions).toContain('dynamodb:UpdateItem');
      expect(actions.filter((action) => /^(s3|secretsmanager|states|lambda|sqs):/.test(action))).toEqual(['states:StartExecution']);
      expect(startableBy(statements)).toEqual(new Set([JSON.stringify({ Ref: stateMachineOf(template, 'Deliver').id })]));
      template.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        Principal: 'events.amazonaws.com',
        FunctionName: { 'Fn::GetAtt': [settle.id, 'Arn'] },
      });
    });

    it('times the whole execution out only past its longest allowed run', () => {
      // 3 attempts of 200 steps of up to 16 calls silent for 900 s each, plus a slice each.
      expect((definitionOf(template) as { TimeoutSeconds?: number }).TimeoutSeconds).toBe(3 * (200 * 16 * 900 + 900));
    });

    it('may invoke exactly its three task functions (and their versions)', () => {
      const statements = statementsOfRole(template, stateMachineOf(template).properties.RoleArn);
      const invoke = statements.filter((statement) => actionsOf([statement]).some((action) => action.startsWith('lambda:')));
      expect(actionsOf(invoke)).toEqual(['lambda:InvokeFunction']);
      const arns = Object.values(TASK_DESCRIPTIONS).map((description) => ({ 'Fn::GetAtt': [functionBy(template, description).id, 'Arn'] }));
      const expected = [...arns, ...arns.map((arn) => ({ 'Fn::Join': ['', [arn, ':*']] }))];
      const resources = invoke.flatMap((statement) => [statement.Resource].flat());
      expect(new Set(resources.map((resource) => JSON.stringify(resource)))).toEqual(new Set(expected.map((arn) => JSON.stringify(arn))));
    });

    it('lets run-steps read secret values below the prefix only, and read and write payloads', () => {
      const { properties } = functionBy(template, TASK_DESCRIPTIONS.runSteps);
      const statements = statementsOfRole(template, properties.Role);
      const secrets = statements.filter((statement) => actionsOf([statement]).some((action) => action.startsWith('secretsmanager:')));
      expect(secrets).toEqual([{ Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: SECRETS_ARN }]);
      const [bucketId] = Object.keys(
        template.findResources('AWS::S3::Bucket', {
          Properties: { LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ Id: 'expire-payloads' })]) } },
        }),
      );
      const objects = { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, '/*']] };
      const objectActions = actionsOf(statements.filter((statement) => JSON.stringify(statement.Resource) === JSON.stringify(objects)));
      expect(objectActions).toEqual(expect.arrayContaining(['s3:GetObject', 's3:PutObject']));
      expect(actionsOf(statements).filter((action) => action.startsWith('s3:') || action.startsWith('secretsmanager:')).sort()).toEqual(
        ['s3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:PutObject', 'secretsmanager:GetSecretValue'],
      );
      expect(properties.Timeout).toBe(900);
      expect(properties.MemorySize).toBeGreaterThanOrEqual(1024);
      expect(properties.Environment.Variables).toMatchObject({
        ATTEMPT_TIMEOUT_SECONDS: '900',
        MAX_ATTEMPTS: '3',
        SPAN_RETENTION_SECONDS: String(90 * 24 * 60 * 60),
        PAYLOAD_BUCKET: { Ref: bucketId },
        SECRET_PREFIX: 'agent-sessions/AgentSessionService/',
        TABLE_NAME: { Ref: Object.keys(template.findResources('AWS::DynamoDB::Table'))[0] },
      });
    });

    it('keeps the bookkeeping tasks to the table, RecordOutcome also starting deliveries of its outcome', () => {
      const delivery = JSON.stringify({ Ref: stateMachineOf(template, 'Deliver').id });
      for (const task of BOOKKEEPING_TASKS) {
        const records = task === 'recordOutcome';
        const { properties } = functionBy(template, TASK_DESCRIPTIONS[task]);
        const statements = statementsOfRole(template, properties.Role);
        const actions = actionsOf(statements);
        expect(actions, task).toContain('dynamodb:PutItem');
        expect(actions.filter((action) => /^(s3|secretsmanager|states|lambda):/.test(action)), task).toEqual(
          records ? ['states:StartExecution'] : [],
        );
        expect(startableBy(statements), task).toEqual(new Set(records ? [delivery] : []));
        expect(properties.Timeout, task).toBe(60);
        expect(Object.keys(properties.Environment.Variables).sort(), task).toEqual([
          'ATTEMPT_TIMEOUT_SECONDS',
          ...(records ? ['DELIVERY_STATE_MACHINE_ARN'] : []),
          'MAX_ATTEMPTS',
          'NODE_OPTIONS',
          'SPAN_RETENTION_SECONDS',
          'TABLE_NAME',
        ]);
      }
    });
  });

  describe('deliveries', () => {
    /** Every function that records an outcome, and so announces it: by description. */
    const ANNOUNCERS = [
      TASK_DESCRIPTIONS.runSteps,
      TASK_DESCRIPTIONS.recordOutcome,
      'Settles an invocation its execution left running',
      ...['run-session', 'delete-session', 'cancel-trace'].map((handler) => keyOf(routeByHandler(handler))),
    ];

    it('run on a second STANDARD state machine, traced, logging events without execution data', () => {
      template.resourceCountIs('AWS::StepFunctions::StateMachine', 2);
      const { properties } = stateMachineOf(template, 'Deliver');
      expect(properties.StateMachineType).toBe('STANDARD');
      expect(properties.TracingConfiguration).toEqual({ Enabled: true });
      expect(properties.LoggingConfiguration).toMatchObject({ Level: 'ALL', IncludeExecutionData: false });
      expect(properties.LoggingConfiguration.Destinations).not.toEqual(stateMachineOf(template).properties.LoggingConfiguration.Destinations);
    });

    it('try the Deliver function, retrying any error with backoff for over an hour', () => {
      const definition = definitionOf(template, 'Deliver');
      const deliver = functionBy(template, DELIVER_DESCRIPTION);
      expect(definition.StartAt).toBe('Deliver');
      expect(Object.keys(definition.States)).toEqual(['Deliver']);
      expect(definition.States.Deliver).toMatchObject({
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke',
        Parameters: { FunctionName: `<${deliver.id}>` },
        TimeoutSeconds: 60,
        Retry: [{ ErrorEquals: ['States.ALL'], IntervalSeconds: 1, BackoffRate: 2, MaxAttempts: 12 }],
        End: true,
      });
      // The function may use the whole try.
      expect(deliver.properties.Timeout).toBe(60);
    });

    it('may invoke the Deliver function and no other, not even its versions', () => {
      const statements = statementsOfRole(template, stateMachineOf(template, 'Deliver').properties.RoleArn);
      const deliver = functionBy(template, DELIVER_DESCRIPTION);
      const invoke = statements.filter((statement) => actionsOf([statement]).some((action) => action.startsWith('lambda:')));
      expect(invoke).toEqual([{ Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: { 'Fn::GetAtt': [deliver.id, 'Arn'] } }]);
      expect(actionsOf(statements).filter((action) => !/^(logs|xray|lambda):/.test(action))).toEqual([]);
    });

    it('let the Deliver function read and write the table, read secret values below the prefix and read payloads, nothing more', () => {
      const { properties } = functionBy(template, DELIVER_DESCRIPTION);
      const statements = statementsOfRole(template, properties.Role);
      const actions = actionsOf(statements);
      expect(actions).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem']));
      const [tableId] = Object.keys(template.findResources('AWS::DynamoDB::Table'));
      for (const statement of statements.filter((candidate) => actionsOf([candidate]).some((action) => action.startsWith('dynamodb:')))) {
        expect(JSON.stringify(statement.Resource)).toContain(`"${tableId}"`);
      }
      const secrets = statements.filter((statement) => actionsOf([statement]).some((action) => action.startsWith('secretsmanager:')));
      expect(secrets).toEqual([{ Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: SECRETS_ARN }]);
      const [bucketId] = Object.keys(
        template.findResources('AWS::S3::Bucket', {
          Properties: { LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ Id: 'expire-payloads' })]) } },
        }),
      );
      expect(statements).toContainEqual({
        Effect: 'Allow',
        Action: 's3:GetObject',
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, '/*']] },
      });
      expect(new Set(actions.filter((action) => !/^(logs|xray|dynamodb):/.test(action)))).toEqual(
        new Set(['s3:GetObject', 's3:ListBucket', 'secretsmanager:GetSecretValue']),
      );
      expect(Object.keys(properties.Environment.Variables).sort()).toEqual([
        'NODE_OPTIONS',
        'PAYLOAD_BUCKET',
        'SECRET_PREFIX',
        'SPAN_RETENTION_SECONDS',
        'TABLE_NAME',
      ]);
      expect(properties.Environment.Variables.SPAN_RETENTION_SECONDS).toBe(String(90 * 86_400));
      // Customer URLs are on the internet: no VPC, as RunSteps.
      expect(properties.VpcConfig).toBeUndefined();
    });

    it('are started by every function that records an outcome, and by no other, on the delivery machine only', () => {
      const { id: deliveryId } = stateMachineOf(template, 'Deliver');
      const { id: machineId } = stateMachineOf(template);
      const delivery = JSON.stringify({ Ref: deliveryId });
      for (const [id, resource] of Object.entries(template.findResources('AWS::Lambda::Function'))) {
        const description = resource.Properties.Description as string | undefined;
        const announces = ANNOUNCERS.includes(description ?? '');
        const startable = startableBy(statementsOfRole(template, resource.Properties.Role));
        const startsInvocations = description === keyOf(routeByHandler('run-session'));
        expect(startable, description ?? id).toEqual(
          new Set([...(announces ? [delivery] : []), ...(startsInvocations ? [JSON.stringify({ Ref: machineId })] : [])]),
        );
        expect(resource.Properties.Environment?.Variables?.DELIVERY_STATE_MACHINE_ARN, description ?? id).toEqual(
          announces ? { Ref: deliveryId } : undefined,
        );
      }
      // SettleAttempt only classifies an attempt; RecordOutcome records what follows.
      expect(ANNOUNCERS).not.toContain(TASK_DESCRIPTIONS.settleAttempt);
    });

    it('never let a function on AWS reach loopback addresses', () => {
      for (const [id, resource] of Object.entries(template.findResources('AWS::Lambda::Function'))) {
        expect(Object.keys(resource.Properties.Environment?.Variables ?? {}), id).not.toContain('ALLOW_LOOPBACK_URLS');
      }
    });
  });

  describe('table', () => {
    it('is on demand, recoverable, expires items and is protected by default', () => {
      template.resourceCountIs('AWS::DynamoDB::Table', 1);
      template.hasResourceProperties('AWS::DynamoDB::Table', {
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
        DeletionProtectionEnabled: true,
        SSESpecification: { SSEEnabled: true },
      });
    });

    it('indexes invocations for trace search, one sparse index per filter sorted by started_at', () => {
      const [table] = Object.values(template.findResources('AWS::DynamoDB::Table'));
      const indexes = table!.Properties.GlobalSecondaryIndexes as { IndexName: string; KeySchema: unknown; Projection: unknown }[];
      for (const filter of ['org', 'agent', 'revision', 'status', 'session']) {
        expect(indexes.find((index) => index.IndexName === `traces_by_${filter}`), filter).toEqual({
          IndexName: `traces_by_${filter}`,
          KeySchema: [
            { AttributeName: `tr_${filter}`, KeyType: 'HASH' },
            { AttributeName: 'started_at', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        });
      }
    });

    it('drops deletion protection when the context says so', () => {
      synthesize({ tableDeletionProtection: 'false' }).template.hasResourceProperties('AWS::DynamoDB::Table', {
        DeletionProtectionEnabled: false,
      });
    });
  });

  describe('payload bucket', () => {
    it('is encrypted, private, TLS-only and expires payloads after 90 days', () => {
      const payloads = {
        LifecycleConfiguration: {
          Rules: Match.arrayWith([
            Match.objectLike({ ExpirationInDays: 90, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }),
          ]),
        },
      };
      template.hasResourceProperties('AWS::S3::Bucket', {
        ...payloads,
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        LoggingConfiguration: { DestinationBucketName: Match.anyValue() },
      });
      const [bucketId] = Object.keys(template.findResources('AWS::S3::Bucket', { Properties: payloads }));
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: bucketId },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    });
  });

  describe('user pool', () => {
    it('lets people sign up with a verified email (the service decides access) with threat protection', () => {
      template.hasResourceProperties('AWS::Cognito::UserPool', {
        AdminCreateUserConfig: { AllowAdminCreateUserOnly: false },
        UsernameAttributes: ['email'],
        AutoVerifiedAttributes: ['email'],
        UserPoolTier: 'PLUS',
        UserPoolAddOns: { AdvancedSecurityMode: 'ENFORCED' },
        Policies: { PasswordPolicy: Match.objectLike({ MinimumLength: 12, RequireSymbols: true }) },
      });
    });

    it('has a browser client without a secret, signing in through the hosted pages only', () => {
      template.hasResourceProperties('AWS::Cognito::UserPoolClient', {
        GenerateSecret: false,
        ExplicitAuthFlows: ['ALLOW_REFRESH_TOKEN_AUTH'],
        AllowedOAuthFlows: ['code'],
      });
    });
  });

  it('outputs what a client and an operator need', () => {
    for (const name of ['ApiUrl', 'UserPoolId', 'UserPoolClientId', 'TableName', 'PayloadBucketName', 'StateMachineArn', 'DeliveryStateMachineArn']) {
      template.hasOutput(name, {});
    }
  });

  it('passes cdk-nag AwsSolutions with every exception acknowledged', () => {
    const report = new AwsSolutionsChecks().validateScope(app);
    const findings = report.violations.map((violation) => ({
      rule: violation.ruleName,
      severity: violation.severity,
      at: violation.violatingResources.map((resource) => resource.constructPath),
    }));
    expect(findings).toEqual([]);
  });
});

describe('ServiceStack context', () => {
  it('takes the stack name, quota, catalogue and secret prefix from the context', () => {
    const { stack, template } = synthesize({
      stackName: 'Beta',
      invocationQuota: '25',
      modelCatalogue: 'openai/gpt-4.1',
    });
    expect(stack.stackName).toBe('Beta');
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: 'POST /secrets',
      Environment: {
        Variables: Match.objectLike({
          INVOCATION_QUOTA: '25',
          MODEL_CATALOGUE: 'openai/gpt-4.1',
          SECRET_PREFIX: 'agent-sessions/Beta/',
        }),
      },
    });
  });

  it('rejects a quota that is not a positive integer and a prefix Secrets Manager cannot hold', () => {
    expect(() => synthesize({ invocationQuota: '0' })).toThrow(/invocationQuota/);
    expect(() => synthesize({ secretPrefix: 'has space/' })).toThrow(/secretPrefix/);
  });

  it('takes the attempt timeout and the attempt count from the context', () => {
    const { template } = synthesize({ attemptTimeoutSeconds: '1', maxAttempts: '5' });
    // The timeout bounds an attempt's silence inside RunSteps, never a slice: a slice of
    // many quick steps may run for Lambda's whole 900 s, its function ending with its task.
    expect(definitionOf(template).States.RunSteps!.TimeoutSeconds).toBe(900);
    expect(functionBy(template, TASK_DESCRIPTIONS.runSteps).properties.Timeout).toBe(900);
    for (const description of Object.values(TASK_DESCRIPTIONS)) {
      expect(functionBy(template, description).properties.Environment.Variables).toMatchObject({
        ATTEMPT_TIMEOUT_SECONDS: '1',
        MAX_ATTEMPTS: '5',
      });
    }
  });

  it('takes one span retention for the payload lifecycle and every function that writes or reads spans', () => {
    const { template } = synthesize({ spanRetentionDays: '7' });
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ Id: 'expire-payloads', ExpirationInDays: 7 })]) },
    });
    const seconds = String(7 * 86_400);
    for (const description of [TASK_DESCRIPTIONS.runSteps, DELIVER_DESCRIPTION, 'GET /traces/{invocation_key}', 'GET /traces']) {
      expect(functionBy(template, description).properties.Environment.Variables.SPAN_RETENTION_SECONDS, description).toBe(seconds);
    }
    expect(() => synthesize({ spanRetentionDays: '0' })).toThrow(/spanRetentionDays/);
  });

  it('rejects an attempt timeout a Lambda function cannot hold and an attempt count out of range', () => {
    expect(() => synthesize({ attemptTimeoutSeconds: '901' })).toThrow(/attemptTimeoutSeconds/);
    expect(() => synthesize({ attemptTimeoutSeconds: '0' })).toThrow(/attemptTimeoutSeconds/);
    expect(() => synthesize({ maxAttempts: '0' })).toThrow(/maxAttempts/);
    expect(() => synthesize({ maxAttempts: '11' })).toThrow(/maxAttempts/);
  });
});
