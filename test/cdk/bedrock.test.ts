import type { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { synthesize } from './synth';

const RUN_STEPS = 'Workflow task: run agent steps of the open attempt';

const arn = (...parts: unknown[]) => ({ 'Fn::Join': ['', parts] });
const foundationModel = (id: string) => arn('arn:', { Ref: 'AWS::Partition' }, ':bedrock:', { Ref: 'AWS::Region' }, `::foundation-model/${id}`);
const profile = (id: string) =>
  arn('arn:', { Ref: 'AWS::Partition' }, ':bedrock:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:inference-profile/${id}`);

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

/** Every bedrock statement of each function's role, by function description. */
function bedrockStatements(template: Template): Record<string, Statement[]> {
  const policies = Object.values(template.findResources('AWS::IAM::Policy'));
  const byRole = (roleId: string) =>
    policies
      .filter((policy) => policy.Properties.Roles.some((role: { Ref?: string }) => role.Ref === roleId))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[])
      .filter((statement) => [statement.Action].flat().some((action) => action.startsWith('bedrock:')));
  return Object.fromEntries(
    Object.values(template.findResources('AWS::Lambda::Function'))
      .map((fn) => [fn.Properties.Description as string, byRole(fn.Properties.Role['Fn::GetAtt'][0])] as const)
      .filter(([, statements]) => statements.length > 0),
  );
}

/** One resource a statement allows, with the statement's condition, as comparable text. */
const grant = (resource: unknown, condition?: unknown) => JSON.stringify({ action: 'bedrock:InvokeModel', resource, condition });

/** What the statements allow, however CDK merged them. */
function grants(statements: Statement[]): Set<string> {
  return new Set(
    statements.flatMap((statement) => {
      expect(statement).toMatchObject({ Effect: 'Allow', Action: 'bedrock:InvokeModel' });
      return [statement.Resource].flat().map((resource) => grant(resource, statement.Condition));
    }),
  );
}

describe('Bedrock access', () => {
  it('lets only RunSteps invoke the default catalogue Bedrock model, through its global inference profile', () => {
    const { template } = synthesize({ founderEmails: 'founder@example.com' });

    const statements = bedrockStatements(template);
    expect(Object.keys(statements)).toEqual([RUN_STEPS]);
    const viaProfile = profile('global.anthropic.claude-haiku-4-5-20251001-v1:0');
    expect(grants(statements[RUN_STEPS]!)).toEqual(
      new Set([
        grant(viaProfile),
        // `*` also matches the empty Region of a global profile's model ARN.
        grant(arn('arn:', { Ref: 'AWS::Partition' }, ':bedrock:*::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0'), {
          StringEquals: { 'bedrock:InferenceProfileArn': viaProfile },
        }),
      ]),
    );
  });

  it('grants exactly the catalogue models: foundation models, and inference profiles with their model only through the profile', () => {
    const { app, template } = synthesize({
      founderEmails: 'founder@example.com',
      // Prices (USD per million tokens, after the last @) are no part of the model id.
      modelCatalogue: 'openai/gpt-4.1@2/8,bedrock/amazon.nova-pro-v1:0@0.8/3.2,bedrock/meta.llama3-1-70b-instruct-v1:0,bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0@3/15',
    });

    const statements = bedrockStatements(template);
    expect(Object.keys(statements)).toEqual([RUN_STEPS]);
    const viaProfile = profile('us.anthropic.claude-sonnet-4-5-20250929-v1:0');
    expect(grants(statements[RUN_STEPS]!)).toEqual(
      new Set([
        grant(foundationModel('amazon.nova-pro-v1:0')),
        grant(foundationModel('meta.llama3-1-70b-instruct-v1:0')),
        grant(viaProfile),
        grant(arn('arn:', { Ref: 'AWS::Partition' }, ':bedrock:*::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0'), {
          StringEquals: { 'bedrock:InferenceProfileArn': viaProfile },
        }),
      ]),
    );
    // The profile's cross-Region grant is the one wildcard, acknowledged with its reason.
    const findings = new AwsSolutionsChecks().validateScope(app).violations.map((violation) => violation.ruleName);
    expect(findings).toEqual([]);
  });

  it('grants nothing on Bedrock when the catalogue has no Bedrock model', () => {
    const { template } = synthesize({ founderEmails: 'founder@example.com', modelCatalogue: 'openai/gpt-4.1,anthropic/claude-sonnet-4-6' });

    expect(bedrockStatements(template)).toEqual({});
  });

  it('refuses a catalogue that is not provider/name entries', () => {
    expect(() => synthesize({ modelCatalogue: 'gpt-4.1' })).toThrow(/provider\/name/);
  });
});
