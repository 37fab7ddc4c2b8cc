import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_COMMAND_SECONDS } from '#contracts/sandbox';
import { synthesize } from './synth';

const SANDBOX = 'Terminal tool sandbox: runs one command, with no permissions';
const RUN_STEPS = 'Workflow task: run agent steps of the open attempt';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

function functionBy(template: Template, description: string): { id: string; properties: Record<string, any> } {
  const found = Object.entries(template.findResources('AWS::Lambda::Function', { Properties: { Description: description } }));
  expect(found, description).toHaveLength(1);
  const [id, resource] = found[0]!;
  return { id, properties: resource.Properties };
}

/** Every policy of the template with the roles it is attached to. */
function policies(template: Template): { roles: unknown[]; statements: Statement[] }[] {
  return Object.values(template.findResources('AWS::IAM::Policy')).map((policy) => ({
    roles: policy.Properties.Roles,
    statements: policy.Properties.PolicyDocument.Statement,
  }));
}

describe('the terminal tool sandbox', () => {
  let template: Template;

  beforeAll(() => {
    ({ template } = synthesize({ founderEmails: 'founder@example.com' }));
  });

  it('is a Node.js 22 arm64 function that outlives the longest command, with modest memory and no configuration', () => {
    const { properties } = functionBy(template, SANDBOX);

    expect(properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'] });
    expect(properties.Timeout).toBeGreaterThan(MAX_COMMAND_SECONDS);
    expect(properties.Timeout).toBeLessThanOrEqual(900);
    expect(properties.MemorySize).toBeLessThanOrEqual(1024);
    expect(properties.Environment).toBeUndefined();
    expect(properties.TracingConfig?.Mode).not.toBe('Active');
  });

  it('runs in tenant isolation mode: an execution environment serves one tenant (one invocation) only', () => {
    const { properties } = functionBy(template, SANDBOX);

    expect(properties.TenancyConfig).toEqual({ TenantIsolationMode: 'PER_TENANT' });
  });

  it('has a role that may do nothing at all, not even reach the workspace snapshots (presigned URLs do)', () => {
    const { properties } = functionBy(template, SANDBOX);
    const roleId = properties.Role['Fn::GetAtt'][0];
    const role = template.findResources('AWS::IAM::Role')[roleId]!;

    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
    ]);
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    expect(role.Properties.Policies).toBeUndefined();
    expect(role.Properties.PermissionsBoundary).toBeUndefined();
    const attached = policies(template).filter((policy) => JSON.stringify(policy.roles).includes(`"${roleId}"`));
    expect(attached).toEqual([]);
    expect(Object.keys(template.findResources('AWS::IAM::ManagedPolicy'))).toEqual([]);
  });

  it('may be invoked by run-steps, which may invoke it and no other function, and is told its name', () => {
    const sandbox = functionBy(template, SANDBOX);
    const runSteps = functionBy(template, RUN_STEPS);
    const runStepsRole = { Ref: runSteps.properties.Role['Fn::GetAtt'][0] };

    const invoking = policies(template).flatMap((policy) =>
      policy.statements
        .filter((statement) => JSON.stringify(statement.Resource).includes(`"${sandbox.id}"`))
        .map((statement) => ({ roles: policy.roles, statement })),
    );
    expect(invoking).toEqual([
      { roles: [runStepsRole], statement: { Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: { 'Fn::GetAtt': [sandbox.id, 'Arn'] } } },
    ]);
    const runStepsLambdaActions = policies(template)
      .filter((policy) => JSON.stringify(policy.roles) === JSON.stringify([runStepsRole]))
      .flatMap((policy) => policy.statements)
      .filter((statement) => [statement.Action].flat().some((action) => action.startsWith('lambda:')));
    expect(runStepsLambdaActions).toHaveLength(1);
    expect(runSteps.properties.Environment.Variables.SANDBOX_FUNCTION_NAME).toEqual({ Ref: sandbox.id });
  });
});
