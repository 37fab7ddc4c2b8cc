import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Annotations, Match, type Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#functions/routes';
import { synthesize } from './synth';

/** The one resource of `type` (and matching `properties`): its logical id and properties. */
function only(template: Template, type: string, properties: Record<string, unknown> = {}): { id: string; properties: Record<string, any> } {
  const found = Object.entries(template.findResources(type, { Properties: properties }));
  expect(found, type).toHaveLength(1);
  const [id, resource] = found[0]!;
  return { id, properties: resource.Properties };
}

/** A value with its `Fn::Join`s joined, `Ref`s written `<Id>` and `Fn::GetAtt`s `<Id.Attribute>`. */
function render(value: unknown): string {
  if (typeof value === 'string') return value;
  const token = value as { 'Fn::Join'?: [string, unknown[]]; Ref?: string; 'Fn::GetAtt'?: [string, string] };
  if (token['Fn::Join']) return token['Fn::Join'][1].map(render).join(token['Fn::Join'][0]);
  if (token.Ref) return `<${token.Ref}>`;
  if (token['Fn::GetAtt']) return `<${token['Fn::GetAtt'].join('.')}>`;
  throw new Error(`cannot render ${JSON.stringify(value)}`);
}

interface ViewerRequest {
  uri: string;
}
type ViewerAnswer = ViewerRequest | { statusCode: number; headers: { location: { value: string } } };

describe('web console', () => {
  let synthesized: ReturnType<typeof synthesize>;
  let template: Template;
  let distribution: { id: string; properties: Record<string, any> };
  let consoleBucketId: string;
  let domainId: string;
  let clientId: string;
  const consoleOrigin = () => `https://<${distribution.id}.DomainName>`;
  const logBucketId = () => distribution.properties.DistributionConfig.Logging.Bucket['Fn::GetAtt'][0] as string;

  beforeAll(() => {
    synthesized = synthesize({ founderEmails: 'founder@example.com' });
    template = synthesized.template;
    distribution = only(template, 'AWS::CloudFront::Distribution');
    consoleBucketId = render(distribution.properties.DistributionConfig.Origins[0].DomainName).match(/^<(\w+)\.RegionalDomainName>$/)![1]!;
    domainId = only(template, 'AWS::Cognito::UserPoolDomain').id;
    clientId = only(template, 'AWS::Cognito::UserPoolClient').id;
  });

  describe('bucket and distribution', () => {
    it('keeps the files in a private, encrypted, TLS-only bucket, no website, logged', () => {
      const bucket = template.toJSON().Resources[consoleBucketId];
      expect(bucket.Properties).toMatchObject({
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
        LoggingConfiguration: { DestinationBucketName: { Ref: logBucketId() }, LogFilePrefix: 'bucket/' },
      });
      expect(bucket.Properties.WebsiteConfiguration).toBeUndefined();
    });

    it('lets only this distribution read it, through Origin Access Control', () => {
      const origin = distribution.properties.DistributionConfig.Origins[0];
      expect(origin.S3OriginConfig).toEqual({ OriginAccessIdentity: '' });
      const oac = only(template, 'AWS::CloudFront::OriginAccessControl');
      expect(origin.OriginAccessControlId).toEqual({ 'Fn::GetAtt': [oac.id, 'Id'] });
      expect(oac.properties.OriginAccessControlConfig).toMatchObject({
        OriginAccessControlOriginType: 's3',
        SigningBehavior: 'always',
        SigningProtocol: 'sigv4',
      });
      const policy = only(template, 'AWS::S3::BucketPolicy', { Bucket: { Ref: consoleBucketId } });
      const allows = policy.properties.PolicyDocument.Statement.filter((statement: { Effect: string }) => statement.Effect === 'Allow');
      expect(allows).toHaveLength(1);
      expect(allows[0]).toMatchObject({
        Principal: { Service: 'cloudfront.amazonaws.com' },
        Action: ['s3:GetObject', 's3:ListBucket'],
      });
      expect(render(allows[0].Condition.StringEquals['AWS:SourceArn'])).toBe(
        `arn:<AWS::Partition>:cloudfront::<AWS::AccountId>:distribution/<${distribution.id}>`,
      );
    });

    it('serves HTTPS only, index.html at the root, with the rewrite function and the header policy on every path', () => {
      const config = distribution.properties.DistributionConfig;
      expect(config.DefaultRootObject).toBe('index.html');
      expect(config.CacheBehaviors).toBeUndefined();
      expect(config.CustomErrorResponses).toBeUndefined();
      const behavior = config.DefaultCacheBehavior;
      expect(behavior.ViewerProtocolPolicy).toBe('redirect-to-https');
      expect(behavior.AllowedMethods).toEqual(['GET', 'HEAD']);
      const rewrite = only(template, 'AWS::CloudFront::Function');
      expect(behavior.FunctionAssociations).toEqual([
        { EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [rewrite.id, 'FunctionARN'] } },
      ]);
      expect(behavior.ResponseHeadersPolicyId).toEqual({ Ref: only(template, 'AWS::CloudFront::ResponseHeadersPolicy').id });
      expect(config.Logging).toEqual({ Bucket: { 'Fn::GetAtt': [logBucketId(), 'RegionalDomainName'] }, Prefix: 'distribution/' });
    });

    it('answers deep links with index.html, keeps files and missing files as they are, and redirects to /console/', () => {
      const { properties } = only(template, 'AWS::CloudFront::Function');
      expect(properties.FunctionConfig.Runtime).toBe('cloudfront-js-2.0');
      const handler = new Function(`${properties.FunctionCode}\nreturn handler;`)() as (event: { request: ViewerRequest }) => ViewerAnswer;
      const requested = (uri: string) => handler({ request: { uri } });

      for (const page of [
        '/console/',
        '/console/sessions',
        '/console/sessions/run.1',
        '/console/traces/inv-key:2',
        '/console/traces/a.json',
        '/console/agents/support-bot',
        '/console/callback',
      ]) {
        expect(requested(page), page).toEqual({ uri: '/console/index.html' });
      }
      for (const file of ['/console/index.html', '/console/config.json', '/console/assets/app-X1.js', '/console/assets/missing.css', '/console/favicon.ico', '/elsewhere']) {
        expect(requested(file), file).toEqual({ uri: file });
      }
      expect(requested('/')).toMatchObject({ statusCode: 302, headers: { location: { value: '/console/' } } });
      expect(requested('/index.html')).toMatchObject({ statusCode: 302, headers: { location: { value: '/console/' } } });
      expect(requested('/console')).toMatchObject({ statusCode: 308, headers: { location: { value: '/console/' } } });
    });

    it('sends a strict Content-Security-Policy, HSTS, nosniff, no referrer and no framing', () => {
      const { properties } = only(template, 'AWS::CloudFront::ResponseHeadersPolicy');
      const headers = properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig;
      expect(headers.ContentSecurityPolicy.Override).toBe(true);
      expect(render(headers.ContentSecurityPolicy.ContentSecurityPolicy).split('; ')).toEqual([
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        `connect-src 'self' https://*.execute-api.<AWS::Region>.<AWS::URLSuffix> https://<${domainId}>.auth.<AWS::Region>.amazoncognito.com`,
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'self'",
      ]);
      expect(headers).toMatchObject({
        StrictTransportSecurity: { AccessControlMaxAgeSec: 31_536_000, IncludeSubdomains: true, Override: true },
        ContentTypeOptions: { Override: true },
        ReferrerPolicy: { ReferrerPolicy: 'no-referrer', Override: true },
        FrameOptions: { FrameOption: 'DENY', Override: true },
      });
    });
  });

  describe('publishing', () => {
    interface Deployment {
      id: string;
      Properties: Record<string, any>;
      DependsOn?: string[];
    }
    const deployments = (): Deployment[] =>
      Object.entries(template.findResources('Custom::CDKBucketDeployment')).map(([id, resource]) => ({ id, ...resource }) as Deployment);

    it('uploads the hashed assets first, kept a year and never pruned, then the pages and config.json, revalidated', () => {
      const all = deployments();
      expect(all).toHaveLength(2);
      const assets = all.find((deployment) => deployment.Properties.DestinationBucketKeyPrefix === 'console/assets/')!;
      const pages = all.find((deployment) => deployment.Properties.DestinationBucketKeyPrefix === 'console/')!;
      for (const deployment of [assets, pages]) expect(deployment.Properties.DestinationBucketName).toEqual({ Ref: consoleBucketId });
      expect(assets.Properties).toMatchObject({ Prune: false, SystemMetadata: { 'cache-control': 'public, max-age=31536000, immutable' } });
      expect(pages.Properties).toMatchObject({ Prune: true, Exclude: ['assets/*'], SystemMetadata: { 'cache-control': 'no-cache' } });
      expect(pages.DependsOn).toContain(assets.id);
    });

    it('writes config.json naming the API, the hosted sign-in, the web client and the callback page', () => {
      const pages = deployments().find((deployment) => deployment.Properties.DestinationBucketKeyPrefix === 'console/')!;
      const keys = pages.Properties.SourceObjectKeys as string[];
      const markers = pages.Properties.SourceMarkers as Record<string, unknown>[];
      const index = markers.findIndex((marker) => marker && Object.keys(marker).length > 0);
      const staged = join(synthesized.app.outdir, `asset.${keys[index]!.replace(/\.zip$/, '')}`, 'config.json');
      let text = readFileSync(staged, 'utf8');
      for (const [marker, value] of Object.entries(markers[index]!)) text = text.split(marker).join(render(value));
      expect(JSON.parse(text)).toEqual({
        apiUrl: `<${only(template, 'AWS::ApiGatewayV2::Api').id}.ApiEndpoint>`,
        signIn: {
          kind: 'cognito',
          domain: `https://<${domainId}>.auth.<AWS::Region>.amazoncognito.com`,
          clientId: `<${clientId}>`,
          redirectUri: `${consoleOrigin()}/console/callback`,
        },
      });
    });

    it('publishes with its own role and log group, not the managed basic execution role', () => {
      const handler = only(template, 'AWS::Lambda::Function', { Runtime: Match.stringLikeRegexp('^python') });
      expect(handler.properties.LoggingConfig).toEqual({ LogGroup: { Ref: expect.stringMatching(/^ConsolePublishLogs/) } });
      const role = template.toJSON().Resources[handler.properties.Role['Fn::GetAtt'][0]];
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    });
  });

  describe('sign-in', () => {
    it('has a Cognito domain for the hosted pages, named after the stack and the account', () => {
      expect(render(only(template, 'AWS::Cognito::UserPoolDomain').properties.Domain)).toBe('agentsessionservice-<AWS::AccountId>');
    });

    it('lets the web client use the authorization code grant only, without a secret, back to the console', () => {
      const { properties } = only(template, 'AWS::Cognito::UserPoolClient');
      expect(properties).toMatchObject({
        GenerateSecret: false,
        AllowedOAuthFlowsUserPoolClient: true,
        AllowedOAuthFlows: ['code'],
        AllowedOAuthScopes: ['openid', 'email', 'profile'],
        SupportedIdentityProviders: ['COGNITO'],
        ExplicitAuthFlows: ['ALLOW_REFRESH_TOKEN_AUTH'],
      });
      expect(properties.CallbackURLs.map(render)).toEqual([`${consoleOrigin()}/console/callback`]);
      expect(properties.LogoutURLs.map(render)).toEqual([`${consoleOrigin()}/console/`]);
    });

    it('takes the domain prefix from the context, and derives a valid one from any stack name', () => {
      const domainOf = (context: Record<string, unknown>) =>
        render(only(synthesize(context).template, 'AWS::Cognito::UserPoolDomain').properties.Domain);
      expect(domainOf({ consoleDomainPrefix: 'acme-agents' })).toBe('acme-agents');
      expect(domainOf({ stackName: 'Beta-AWS-Console' })).toBe('beta-console-<AWS::AccountId>');
      for (const prefix of ['Acme', 'acme_agents', '-acme', 'acme-aws', 'my-cognito', 'a'.repeat(64)]) {
        expect(() => synthesize({ consoleDomainPrefix: prefix }), prefix).toThrow(/consoleDomainPrefix/);
      }
    });
  });

  it("lets the API admit exactly the console's origin, for the methods and headers it uses", () => {
    const { properties } = only(template, 'AWS::ApiGatewayV2::Api');
    const cors = properties.CorsConfiguration;
    expect(cors.AllowOrigins.map(render)).toEqual([consoleOrigin()]);
    expect(cors.AllowCredentials).toBeUndefined();
    expect([...cors.AllowMethods].sort()).toEqual([...new Set(routes.map((route) => route.method))].sort());
    expect(cors.AllowHeaders).toEqual(['authorization', 'content-type', 'idempotency-key']);
    expect(cors.ExposeHeaders).toEqual(['idempotency-key', 'retry-after']);
  });

  it('keeps the distribution from waiting for the API, which waits for the distribution (CORS)', () => {
    // Synthesis fails on a circular dependency (CDK validates the template); this names the edge that would close one.
    const api = only(template, 'AWS::ApiGatewayV2::Api').id;
    const headers = only(template, 'AWS::CloudFront::ResponseHeadersPolicy');
    expect(JSON.stringify([distribution.properties, headers.properties])).not.toContain(`"${api}"`);
  });

  it('outputs the console URL', () => {
    expect(render(template.toJSON().Outputs.ConsoleUrl.Value)).toBe(`${consoleOrigin()}/console/`);
  });

  it('synthesizes without warnings', () => {
    expect(Annotations.fromStack(synthesized.stack).findWarning('*', Match.anyValue())).toEqual([]);
  });

  it('raises no cdk-nag AwsSolutions finding that is not acknowledged', () => {
    const report = new AwsSolutionsChecks().validateScope(synthesized.app);
    expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
  });
});
