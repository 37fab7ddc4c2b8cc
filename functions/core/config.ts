/**
 * The service's configuration, read from the environment. Both worlds set the same
 * variables: CDK on each function, the local cloud in its own process. Values are read
 * on use so a missing one fails only the code that needs it, with its name.
 */

export interface CatalogueModel {
  name: string;
  provider: string;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is not set`);
  return value;
}

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`environment variable ${name} must be a positive integer`);
  return value;
}

/** `provider/name` entries, comma-separated; the provider is everything before the first `/`. */
export function parseModelCatalogue(raw: string): CatalogueModel[] {
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const slash = entry.indexOf('/');
      if (slash < 1 || slash === entry.length - 1) throw new Error(`MODEL_CATALOGUE entry "${entry}" is not provider/name`);
      return { provider: entry.slice(0, slash), name: entry.slice(slash + 1) };
    });
}

/**
 * Current models of each provider. Claude 4.5 and later run on Bedrock only through
 * inference profiles; the global one works from every commercial Region.
 */
export const DEFAULT_MODEL_CATALOGUE =
  'openai/gpt-4.1,openai/gpt-4.1-mini,anthropic/claude-sonnet-4-6,anthropic/claude-haiku-4-5,bedrock/global.anthropic.claude-haiku-4-5-20251001-v1:0';

export const config = {
  /** The single DynamoDB table. */
  get tableName() {
    return required('TABLE_NAME');
  },
  /** The S3 bucket holding span payloads. */
  get payloadBucket() {
    return required('PAYLOAD_BUCKET');
  },
  /** Secrets Manager name prefix owned by this deployment; org secrets live below it. */
  get secretPrefix() {
    return required('SECRET_PREFIX');
  },
  /** Issuer of user bearer tokens (Cognito user pool, or the local sign-in). */
  get authIssuer() {
    return required('AUTH_ISSUER');
  },
  /** Audience (`aud`) user bearer tokens must carry: the Cognito app client id. */
  get authAudience() {
    return required('AUTH_AUDIENCE');
  },
  /** Addresses that hold a founder invite until they belong to an organization. */
  get founderEmails(): string[] {
    return (process.env.FOUNDER_EMAILS ?? '')
      .split(',')
      .map((email) => email.trim().toLowerCase())
      .filter(Boolean);
  },
  /** Invocations an organization may start during the private beta. */
  get invocationQuota() {
    return positiveInteger('INVOCATION_QUOTA', 1000);
  },
  /** Seconds an attempt may go without finishing a step before it is killed. */
  get attemptTimeoutSeconds() {
    return positiveInteger('ATTEMPT_TIMEOUT_SECONDS', 900);
  },
  /** Attempts an invocation may make before it fails. */
  get maxAttempts() {
    return positiveInteger('MAX_ATTEMPTS', 3);
  },
  /** How long spans (and their payloads) are kept after the invocation started. */
  get spanRetentionSeconds() {
    return positiveInteger('SPAN_RETENTION_SECONDS', 90 * 24 * 60 * 60);
  },
  /** The invocation state machine. */
  get stateMachineArn() {
    return required('STATE_MACHINE_ARN');
  },
  /**
   * The longest a run request waits in one HTTP answer; past it the answer is 504 and
   * clients re-attach (API Gateway answers within ~29 s). Unset: the whole wait.
   */
  get waitSliceSeconds(): number | undefined {
    return process.env.WAIT_SLICE_SECONDS ? positiveInteger('WAIT_SLICE_SECONDS', 25) : undefined;
  },
  /** The sandbox function the terminal tool runs commands in; unset where the deployment offers no terminal tool. */
  get sandboxFunctionName(): string | undefined {
    return process.env.SANDBOX_FUNCTION_NAME || undefined;
  },
  /** Models `GET /models` offers. */
  get modelCatalogue(): CatalogueModel[] {
    return parseModelCatalogue(process.env.MODEL_CATALOGUE || DEFAULT_MODEL_CATALOGUE);
  },
};
