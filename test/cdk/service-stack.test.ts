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

/** The function serving `route`: its logical id and properties. */
function functionOf(template: Template, route: Route): { id: string; properties: Record<string, any> } {
  const found = Object.entries(template.findResources('AWS::Lambda::Function', { Properties: { Description: keyOf(route) } }));
  expect(found, keyOf(route)).toHaveLength(1);
  const [id, resource] = found[0]!;
  return { id, properties: resource.Properties };
}

/** Every IAM statement attached to the role of `route`'s function. */
function statementsOf(template: Template, route: Route): Statement[] {
  const roleId = functionOf(template, route).properties.Role['Fn::GetAtt'][0];
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) => policy.Properties.Roles.some((role: unknown) => JSON.stringify(role) === JSON.stringify({ Ref: roleId })))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement);
}

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
      template.allResourcesProperties('AWS::Lambda::Function', {
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
        Environment: { Variables: Match.objectLike({ NODE_OPTIONS: '--enable-source-maps' }) },
        LoggingConfig: { LogGroup: Match.anyValue() },
      });
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

    it('grants every function exactly the kinds of access its route lists', () => {
      for (const route of routes) {
        const actions = actionsOf(statementsOf(template, route));
        const tableWrites = actions.some((action) => TABLE_WRITE_ACTIONS.includes(action));
        expect(tableWrites, keyOf(route)).toBe(route.access.includes('table:write'));
        expect(actions.includes('dynamodb:Query'), keyOf(route)).toBe(route.access.includes('table:read'));
        expect(actions.includes('s3:GetObject'), keyOf(route)).toBe(route.access.includes('payloads:read'));
        expect(actions.includes('s3:PutObject'), keyOf(route)).toBe(route.access.includes('payloads:write'));
        expect(actions.includes('secretsmanager:GetSecretValue'), keyOf(route)).toBe(route.access.includes('secrets:read'));
        expect(actions.includes('secretsmanager:CreateSecret'), keyOf(route)).toBe(route.access.includes('secrets:write'));
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

    it('has a browser client without a secret', () => {
      template.hasResourceProperties('AWS::Cognito::UserPoolClient', {
        GenerateSecret: false,
        ExplicitAuthFlows: Match.arrayWith(['ALLOW_USER_SRP_AUTH']),
      });
    });
  });

  it('outputs what a client and an operator need', () => {
    for (const name of ['ApiUrl', 'UserPoolId', 'UserPoolClientId', 'TableName', 'PayloadBucketName']) {
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
});
