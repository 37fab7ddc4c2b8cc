/**
 * The service's configuration, read from the environment. Both worlds set the same
 * variables (their names in `env.ts`): CDK on each function, the local cloud in its own
 * process. Values are read on use so a missing one fails only the code that needs it, with
 * its name.
 */
import { ENV } from './env';

export interface CatalogueModel {
  name: string;
  provider: string;
  /** USD per million input tokens, when the catalogue prices the model. */
  input_usd_per_mtok?: number;
  /** USD per million output tokens, when the catalogue prices the model. */
  output_usd_per_mtok?: number;
}

const PRICE = /^(\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?)$/;

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

/**
 * `provider/name` entries, comma-separated; the provider is everything before the first
 * `/`. An entry may end in prices, USD per million input and output tokens:
 * `openai/gpt-4.1-mini@0.4/1.6`, split at the last `@` (model ids may hold `@`), which
 * counts as a price only when what follows it is one.
 */
export function parseModelCatalogue(raw: string): CatalogueModel[] {
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const at = entry.lastIndexOf('@');
      const price = at > 0 ? PRICE.exec(entry.slice(at + 1)) : null;
      const model = price ? entry.slice(0, at) : entry;
      const slash = model.indexOf('/');
      if (slash < 1 || slash === model.length - 1) throw new Error(`MODEL_CATALOGUE entry "${entry}" is not provider/name[@input/output]`);
      return {
        provider: model.slice(0, slash),
        name: model.slice(slash + 1),
        ...(price ? { input_usd_per_mtok: Number(price[1]), output_usd_per_mtok: Number(price[2]) } : {}),
      };
    });
}

/** What `usage` of `model` costs in USD by the catalogue; undefined when it does not price the model. */
export function costOf(
  catalogue: CatalogueModel[],
  model: { provider: string; name: string },
  usage: { input_tokens: number; output_tokens: number },
): number | undefined {
  const entry = catalogue.find((candidate) => candidate.provider === model.provider && candidate.name === model.name);
  if (entry?.input_usd_per_mtok === undefined || entry.output_usd_per_mtok === undefined) return undefined;
  const cost = (usage.input_tokens * entry.input_usd_per_mtok + usage.output_tokens * entry.output_usd_per_mtok) / 1_000_000;
  // Whole nano-dollars: no floating-point dust in what clients show.
  return Math.round(cost * 1e9) / 1e9;
}

/**
 * Current models of each provider. Claude 4.5 and later run on Bedrock only through
 * inference profiles; the global one works from every commercial Region.
 */
export const DEFAULT_MODEL_CATALOGUE =
  'openai/gpt-4.1@2/8,openai/gpt-4.1-mini@0.4/1.6,anthropic/claude-sonnet-4-6@3/15,anthropic/claude-haiku-4-5@1/5,' +
  'bedrock/global.anthropic.claude-haiku-4-5-20251001-v1:0@1/5';

export const config = {
  /** The single DynamoDB table. */
  get tableName() {
    return required(ENV.tableName);
  },
  /** The S3 bucket holding span payloads. */
  get payloadBucket() {
    return required(ENV.payloadBucket);
  },
  /** Secrets Manager name prefix owned by this deployment; org secrets live below it. */
  get secretPrefix() {
    return required(ENV.secretPrefix);
  },
  /** Issuer of user bearer tokens (Cognito user pool, or the local sign-in). */
  get authIssuer() {
    return required(ENV.authIssuer);
  },
  /** Audience (`aud`) user bearer tokens must carry: the Cognito app client id. */
  get authAudience() {
    return required(ENV.authAudience);
  },
  /** Addresses that hold a founder invite until they belong to an organization. */
  get founderEmails(): string[] {
    return (process.env[ENV.founderEmails] ?? '')
      .split(',')
      .map((email) => email.trim().toLowerCase())
      .filter(Boolean);
  },
  /** Invocations an organization may start during the private beta. */
  get invocationQuota() {
    return positiveInteger(ENV.invocationQuota, 1000);
  },
  /** Seconds an attempt may go without finishing a step before it is killed. */
  get attemptTimeoutSeconds() {
    return positiveInteger(ENV.attemptTimeoutSeconds, 900);
  },
  /** Attempts an invocation may make before it fails. */
  get maxAttempts() {
    return positiveInteger(ENV.maxAttempts, 3);
  },
  /** How long spans (and their payloads) are kept after the invocation started. */
  get spanRetentionSeconds() {
    return positiveInteger(ENV.spanRetentionSeconds, 90 * 24 * 60 * 60);
  },
  /** The Secrets Manager secret holding the key that signs list cursors. */
  get cursorKeySecretId() {
    return required(ENV.cursorKeySecretId);
  },
  /** `debug`, `info`, `warn` or `error`. */
  get logLevel(): string {
    return (process.env[ENV.logLevel] ?? 'info').toLowerCase();
  },
  /** The invocation state machine. */
  get stateMachineArn() {
    return required(ENV.stateMachineArn);
  },
  /** The state machine that delivers outcomes to webhooks and the OTLP export. */
  get deliveryStateMachineArn() {
    return required(ENV.deliveryStateMachineArn);
  },
  /**
   * Whether webhook and export URLs may name loopback addresses (over http too): the local
   * cloud's tests run their receivers on 127.0.0.1. Never set on AWS.
   */
  get loopbackUrls(): boolean {
    return process.env[ENV.loopbackUrls] === 'true';
  },
  /**
   * The longest a run request waits in one HTTP answer; past it the answer is 504 and
   * clients re-attach (API Gateway answers within ~29 s). Unset: the whole wait.
   */
  get waitSliceSeconds(): number | undefined {
    return process.env[ENV.waitSliceSeconds] ? positiveInteger(ENV.waitSliceSeconds, 25) : undefined;
  },
  /** The sandbox function the terminal tool runs commands in; unset where the deployment offers no terminal tool. */
  get sandboxFunctionName(): string | undefined {
    return process.env[ENV.sandboxFunctionName] || undefined;
  },
  /** Models `GET /models` offers. */
  get modelCatalogue(): CatalogueModel[] {
    return parseModelCatalogue(process.env[ENV.modelCatalogue] || DEFAULT_MODEL_CATALOGUE);
  },
};
