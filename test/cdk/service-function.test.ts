import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AttributeType, BillingMode, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { DefinitionBody, StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bindPayloads, bindSecrets, bindTable, bindWorkflow, ServiceFunction } from '../../lib/service-function';
import { testContext } from './synth';

const ENTRY = 'functions/handlers/get-health.ts';

describe('ServiceFunction bindings', () => {
  it('grant with acknowledged wildcards only, including those of table indexes and executions', () => {
    // Prepare
    const app = new App({ context: testContext() });
    const stack = new Stack(app, 'Bindings');
    const table = new Table(stack, 'Table', {
      partitionKey: { name: 'pk', type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
    });
    table.addGlobalSecondaryIndex({ indexName: 'byOwner', partitionKey: { name: 'owner', type: AttributeType.STRING } });
    const bucket = new Bucket(stack, 'Bucket', { encryption: BucketEncryption.S3_MANAGED, enforceSSL: true });
    const stateMachine = new StateMachine(stack, 'Machine', {
      definitionBody: DefinitionBody.fromString(JSON.stringify({ StartAt: 'Done', States: { Done: { Type: 'Succeed' } } })),
    });
    const fn = new ServiceFunction(stack, 'Fn', { entry: ENTRY });

    // Act
    bindTable(fn, table, 'read');
    bindPayloads(fn, bucket, 'write');
    bindSecrets(fn, 'agent-sessions/test/', 'read');
    bindWorkflow(fn, stateMachine, 'start');
    bindWorkflow(fn, stateMachine, 'stop');

    // Assess
    const iamFindings = new AwsSolutionsChecks()
      .validateScope(stack)
      .violations.map((violation) => violation.ruleName)
      .filter((rule) => rule.startsWith('AwsSolutions-IAM'));
    expect(iamFindings).toEqual([]);
    const template = Template.fromStack(stack);
    const [resource] = Object.values(template.findResources('AWS::Lambda::Function'));
    expect(Object.keys(resource?.Properties.Environment.Variables).sort()).toEqual([
      'NODE_OPTIONS',
      'PAYLOAD_BUCKET',
      'SECRET_PREFIX',
      'STATE_MACHINE_ARN',
      'TABLE_NAME',
    ]);
    const machineId = stack.getLogicalId(stateMachine.node.defaultChild as CfnElement);
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          { Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: Match.anyValue() },
          { Effect: 'Allow', Action: 'states:StartExecution', Resource: { Ref: machineId } },
          {
            Effect: 'Allow',
            Action: ['states:DescribeExecution', 'states:StopExecution'],
            Resource: {
              'Fn::Join': [
                '',
                [
                  'arn:',
                  { Ref: 'AWS::Partition' },
                  ':states:',
                  { Ref: 'AWS::Region' },
                  ':',
                  { Ref: 'AWS::AccountId' },
                  ':execution:',
                  { 'Fn::GetAtt': [machineId, 'Name'] },
                  ':*',
                ],
              ],
            },
          },
        ]),
      },
    });
  });
});

describe('ServiceFunction bundling', () => {
  it('produces a minified ESM bundle with its own AWS SDK, a require shim and a source map', () => {
    // Prepare: no `aws:cdk:bundling-stacks`, so this one function is bundled for real.
    const { 'aws:cdk:bundling-stacks': _skipped, ...context } = testContext();
    const app = new App({ context });
    new ServiceFunction(new Stack(app, 'Bundled'), 'GetHealth', { entry: ENTRY });

    // Act
    const assembly = app.synth();

    // Assess
    const assets = readdirSync(assembly.directory).filter((name) => name.startsWith('asset.'));
    expect(assets).toHaveLength(1);
    const dir = join(assembly.directory, assets[0]!);
    expect(readdirSync(dir).sort()).toEqual(['index.mjs', 'index.mjs.map']);
    const bundle = readFileSync(join(dir, 'index.mjs'), 'utf8');
    expect(bundle.startsWith("import { createRequire } from 'module'; const require = createRequire(import.meta.url);")).toBe(true);
    expect(bundle).not.toMatch(/from\s*"@aws-sdk\//);
    expect(bundle).toMatch(/export\s*\{[^}]*\bhandler\b/);
  });
});
