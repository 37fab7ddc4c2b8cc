import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Annotations, DefaultStackSynthesizer, Duration, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLevel,
  AllowedMethods,
  CachePolicy,
  Distribution,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ObjectOwnership, type Bucket } from 'aws-cdk-lib/aws-s3';
import { accessLogBucket, privateBucket } from './private-bucket';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { buildConsoleSync } from '../console/build';
import { CONSOLE_BASE_PATH, CONSOLE_CALLBACK_PATH, contentSecurityPolicy, type ConsoleConfig } from '../console/config';
import { logicalId } from './service-function';

/** The build's subdirectory of content-hashed files (`console/build.ts`); everything else is a page or config.json. */
const ASSETS_DIR = 'assets';

/** The bucket holds the console under the same keys as its paths: `/console/x` is the object `console/x`. */
const KEY_PREFIX = CONSOLE_BASE_PATH.slice(1);

/** Days access logs of the console's bucket and distribution are kept: as long as the API's access logs. */
const ACCESS_LOG_RETENTION_DAYS = 90;

/**
 * The viewer-request function: `/` and `/console` redirect to `/console/`, and every path under
 * `/console/` that is not a file of the build (a top-level `name.ext`, or anything below
 * `assets/`) is answered with `index.html`, so deep links such as `/console/sessions/run.1`
 * open the app while a missing asset stays a 404. Ids may hold dots, so only the build's own
 * layout tells files from pages. `/index.html` is redirected too, in case the default root
 * object was applied before the function ran.
 */
const REWRITE_CODE = `var BASE = ${JSON.stringify(CONSOLE_BASE_PATH)};
var ASSETS = ${JSON.stringify(`${ASSETS_DIR}/`)};

function redirect(statusCode, statusDescription, location) {
  return { statusCode: statusCode, statusDescription: statusDescription, headers: { location: { value: location } } };
}

function isFile(path) {
  return path.startsWith(ASSETS) || (path.indexOf('/') === -1 && /\\.[A-Za-z0-9]+$/.test(path));
}

function handler(event) {
  var request = event.request;
  var uri = request.uri;
  if (uri === '/' || uri === '/index.html') return redirect(302, 'Found', BASE);
  if (uri === BASE.slice(0, -1)) return redirect(308, 'Permanent Redirect', BASE);
  if (uri.startsWith(BASE) && !isFile(uri.slice(BASE.length))) request.uri = BASE + 'index.html';
  return request;
}
`;

/** Properties of a {@link Console}. */
export interface ConsoleProps {
  /** The API as the Content-Security-Policy's `connect-src` names it: an origin, or a host pattern. */
  readonly apiSource: string;
  /** The hosted sign-in's origin, whose token endpoint the console calls. */
  readonly signInOrigin: string;
}

/**
 * The web console on AWS: the files `console/build.ts` builds, in a private bucket behind a
 * CloudFront distribution (Origin Access Control, HTTPS only) that serves them under
 * `/console/` with the console's security headers, as the local gateway does. The bucket
 * holds them under the keys `console/...`, so paths and keys are the same and no origin
 * path is needed. {@link publish} uploads them with the deployment's `config.json`.
 */
export class Console extends Construct {
  readonly bucket: Bucket;
  readonly distribution: Distribution;
  /** `https://<distribution domain>`: the origin the API admits. */
  readonly origin: string;
  /** The console's address, `https://<distribution domain>/console/`. */
  readonly url: string;
  /** The page Cognito returns the authorization code to. */
  readonly callbackUrl: string;

  constructor(scope: Construct, id: string, props: ConsoleProps) {
    super(scope, id);
    // CloudFront standard logs are written with ACLs, so this bucket keeps them enabled.
    const accessLogs = accessLogBucket(this, 'AccessLogs', ACCESS_LOG_RETENTION_DAYS, { objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED });
    this.bucket = privateBucket(this, 'Bucket', { serverAccessLogsBucket: accessLogs, serverAccessLogsPrefix: 'bucket/' });

    const rewrite = new CloudFrontFunction(this, 'Rewrite', {
      comment: 'Web console: deep links to index.html, / to /console/',
      runtime: FunctionRuntime.JS_2_0,
      code: FunctionCode.fromInline(REWRITE_CODE),
    });
    const headers = new ResponseHeadersPolicy(this, 'Headers', {
      comment: 'Web console: the security headers of console/config.ts, plus HSTS',
      securityHeadersBehavior: {
        contentSecurityPolicy: {
          contentSecurityPolicy: consoleContentSecurityPolicy(props.apiSource, props.signInOrigin),
          override: true,
        },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: true, override: true },
        contentTypeOptions: { override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
      },
    });
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Agent Session Service web console',
      // Never list the bucket for `/` (the function redirects it first in any case).
      defaultRootObject: 'index.html',
      httpVersion: HttpVersion.HTTP2_AND_3,
      defaultBehavior: {
        // LIST lets S3 answer a missing asset 404 instead of 403; the bucket holds only the console.
        origin: S3BucketOrigin.withOriginAccessControl(this.bucket, { originAccessLevels: [AccessLevel.READ, AccessLevel.LIST] }),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: headers,
        functionAssociations: [{ function: rewrite, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
      logBucket: accessLogs,
      logFilePrefix: 'distribution/',
    });
    Annotations.of(this.distribution).acknowledgeWarning(
      '@aws-cdk/aws-cloudfront-origins:listBucketSecurityRisk',
      'The default root object is set, and the rewrite function redirects / before it could apply.',
    );
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR1',
      reason: 'The console is for anyone the service admits, wherever they are; the API decides access.',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR2',
      reason: 'The distribution serves only static files from a private bucket; a WAF web ACL for CloudFront must live in us-east-1, and the API it calls is throttled at its stage.',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR4',
      reason: "The distribution uses CloudFront's default *.cloudfront.net certificate, whose viewer TLS policy CloudFront fixes; a custom domain and certificate would be needed to choose one.",
    });

    this.origin = `https://${this.distribution.distributionDomainName}`;
    this.url = `${this.origin}${CONSOLE_BASE_PATH}`;
    this.callbackUrl = `${this.origin}${CONSOLE_CALLBACK_PATH}`;
  }

  /**
   * Uploads the built console and `config.json` (`config`) to the bucket: content-hashed
   * assets first (cached for a year), then the pages and config.json (revalidated on every
   * load), so a new page never names an asset not yet there.
   */
  publish(config: ConsoleConfig): void {
    const dir = consoleFiles(this);
    // An own role: the default one carries AWSLambdaBasicExecutionRole (every log group).
    const logGroup = new LogGroup(this, 'PublishLogs', { retention: RetentionDays.THREE_MONTHS });
    const role = new Role(this, 'PublishRole', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    logGroup.grantWrite(role);

    const assets = new BucketDeployment(this, 'Assets', {
      sources: [Source.asset(join(dir, ASSETS_DIR))],
      destinationBucket: this.bucket,
      destinationKeyPrefix: `${KEY_PREFIX}${ASSETS_DIR}/`,
      // A page a browser loaded before this deployment may still fetch the assets it names.
      prune: false,
      cacheControl: [CacheControl.setPublic(), CacheControl.maxAge(Duration.days(365)), CacheControl.immutable()],
      role,
      logGroup,
    });
    const pages = new BucketDeployment(this, 'Pages', {
      sources: [Source.asset(dir, { exclude: [ASSETS_DIR] }), Source.jsonData('config.json', config)],
      destinationBucket: this.bucket,
      destinationKeyPrefix: KEY_PREFIX,
      // Pruning stale pages must leave the assets alone.
      exclude: [`${ASSETS_DIR}/*`],
      cacheControl: [CacheControl.noCache()],
      role,
      logGroup,
    });
    pages.node.addDependency(assets);

    acknowledgePublishing(role, this.bucket);
  }
}

/** Acknowledges what cdk-nag finds in CDK's BucketDeployment handler, which runs as `role` and writes `bucket`. */
function acknowledgePublishing(role: Role, bucket: Bucket): void {
  const stack = Stack.of(role);
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${logicalId(bucket)}.Arn>/*]`,
    reason: "The deployment writes and prunes the console's files, whose names change with every build; the wildcard covers only the console bucket.",
  });
  for (const action of ['s3:GetBucket*', 's3:GetObject*', 's3:List*', 's3:DeleteObject*', 's3:Abort*']) {
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Action::${action}]`,
      reason: "CDK's BucketDeployment grants these to sync the build into the console bucket and read it from the bootstrap assets bucket; they apply to those two buckets only.",
    });
  }
  const synthesizer = stack.synthesizer;
  if (synthesizer instanceof DefaultStackSynthesizer) {
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::cdk-${synthesizer.bootstrapQualifier}-assets-<AWS::AccountId>-<AWS::Region>/*]`,
      reason: 'The deployment reads the uploaded build from the bootstrap assets bucket, under a key that changes with every build.',
    });
  }
  // The handler is a singleton at the stack's root; it is the one function with this role.
  for (const handler of stack.node.findAll().filter((node) => node instanceof LambdaFunction && node.role === role)) {
    Validations.of(handler).acknowledge({
      id: 'AwsSolutions-L1',
      reason: "The runtime is that of CDK's BucketDeployment handler (Python), which moves with aws-cdk-lib.",
    });
  }
}

/**
 * The built console's directory. When this stack is not bundled (template tests synthesize
 * with `aws:cdk:bundling-stacks: []`), a stand-in page instead, as functions skip their bundling.
 */
function consoleFiles(scope: Construct): string {
  if (Stack.of(scope).bundlingRequired) return buildConsoleSync().dir;
  const dir = mkdtempSync(join(tmpdir(), 'agent-sessions-console-'));
  mkdirSync(join(dir, ASSETS_DIR));
  writeFileSync(join(dir, 'index.html'), '<!doctype html>\n');
  return dir;
}

/**
 * The console's Content-Security-Policy (written once in `console/config.ts`) for origins known
 * only at deployment. config.ts parses its origins as URLs, which CDK tokens are not, so the
 * policy is rendered for stand-in origins that are then swapped for the real ones.
 */
function consoleContentSecurityPolicy(apiSource: string, signInOrigin: string): string {
  const api = 'https://api.invalid';
  const signIn = 'https://sign-in.invalid';
  return contentSecurityPolicy({ apiUrl: api, signIn: { kind: 'cognito', domain: signIn, clientId: '', redirectUri: '' } })
    .replace(api, () => apiSource)
    .replace(signIn, () => signInOrigin);
}
