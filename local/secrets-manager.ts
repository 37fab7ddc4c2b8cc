/**
 * A Secrets Manager stand-in behind the AWS JSON endpoint (`secretsmanager.*` targets):
 * string secrets with AWSCURRENT/AWSPREVIOUS versions, scheduled and forced deletion as
 * on AWS, name-prefix listing with paging. State lives in memory and, with a file, is
 * written out (atomically, mode 0600) before each change is acknowledged.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from './account';
import { AwsServiceError, type AwsJsonService } from './aws-json';
import { LocalCloudError } from './errors';
import { stateFile } from './state-file';

interface StoredVersion {
  id: string;
  value: string;
  stages: string[];
  created: number;
}

interface StoredSecret {
  name: string;
  arn: string;
  description?: string;
  created: number;
  changed: number;
  /** When deletion was requested, and when it takes effect. */
  deletedAt?: number;
  deleteAfter?: number;
  versions: StoredVersion[];
}

export interface SecretsManagerOptions {
  /** Where state persists; null keeps it in memory only. */
  file: string | null;
}

const DAY_MS = 86_400_000;
const NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const MARKED_FOR_DELETION = "You can't perform this operation on the secret because it was marked for deletion.";

const seconds = (epochMs: number) => epochMs / 1000;

function arnFor(name: string): string {
  const suffix = Array.from(randomBytes(6), (byte) => ALPHANUMERIC[byte % ALPHANUMERIC.length]).join('');
  return `arn:aws:secretsmanager:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:secret:${name}-${suffix}`;
}

function optionalString(input: Record<string, unknown>, field: string): string | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new AwsServiceError('ValidationException', `${field} must be a string`);
  return value;
}

function requiredString(input: Record<string, unknown>, field: string): string {
  const value = optionalString(input, field);
  if (value === undefined) throw new AwsServiceError('ValidationException', `${field} is required`);
  return value;
}

function rejectBinary(input: Record<string, unknown>): void {
  if (input.SecretBinary !== undefined) {
    throw new AwsServiceError('InvalidParameterException', 'SecretBinary is not supported by the local Secrets Manager');
  }
}

function versionStages(secret: StoredSecret): Record<string, string[]> {
  return Object.fromEntries(secret.versions.map((version) => [version.id, [...version.stages]]));
}

function summary(secret: StoredSecret) {
  return {
    ARN: secret.arn,
    Name: secret.name,
    ...(secret.description !== undefined ? { Description: secret.description } : {}),
    CreatedDate: seconds(secret.created),
    LastChangedDate: seconds(secret.changed),
    ...(secret.deletedAt !== undefined ? { DeletedDate: seconds(secret.deletedAt) } : {}),
  };
}

/** Page position: the sort key of the last secret returned. */
function encodeToken(secret: StoredSecret): string {
  return Buffer.from(JSON.stringify([secret.created, secret.name])).toString('base64url');
}

function decodeToken(token: string): [number, string] {
  try {
    const value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && typeof value[0] === 'number' && typeof value[1] === 'string') return [value[0], value[1]];
  } catch {
    // Fall through to the error below.
  }
  throw new AwsServiceError('InvalidNextTokenException', 'NextToken is not valid');
}

function byCreation(a: StoredSecret, b: StoredSecret): number {
  return a.created - b.created || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

function matchesFilters(secret: StoredSecret, filters: unknown): boolean {
  if (filters === undefined || filters === null) return true;
  if (!Array.isArray(filters)) throw new AwsServiceError('ValidationException', 'Filters must be a list');
  return filters.every((filter: { Key?: unknown; Values?: unknown }) => {
    const fields: Record<string, (string | undefined)[]> = {
      name: [secret.name],
      description: [secret.description],
      all: [secret.name, secret.description],
    };
    const candidates = typeof filter.Key === 'string' ? fields[filter.Key] : undefined;
    if (!candidates || !Array.isArray(filter.Values)) {
      throw new AwsServiceError('InvalidParameterException', `filter key ${String(filter.Key)} is not supported locally`);
    }
    // As on AWS: values are prefixes, any value may match, and a leading `!` negates.
    return (filter.Values as unknown[]).some((raw) => {
      const value = String(raw);
      const negated = value.startsWith('!');
      const prefix = negated ? value.slice(1) : value;
      const hit = candidates.some((candidate) => candidate?.startsWith(prefix));
      return negated ? !hit : hit;
    });
  });
}

/** Creates the Secrets Manager service, loading earlier state from the file if there is one. */
export async function createSecretsManager(options: SecretsManagerOptions): Promise<AwsJsonService> {
  const secrets = new Map<string, StoredSecret>();
  if (options.file) {
    let text: string | undefined;
    try {
      text = await readFile(options.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (text !== undefined) {
      try {
        for (const secret of (JSON.parse(text) as { secrets: StoredSecret[] }).secrets) secrets.set(secret.name, secret);
      } catch {
        throw new LocalCloudError(`${options.file} is not a valid secrets file; move it away to start afresh`);
      }
    }
  }

  const { persist, flush } = stateFile(options.file, () => ({ secrets: [...secrets.values()] }));

  /** Drops secrets whose recovery window has passed, as AWS eventually does. */
  function purgeExpired(): Promise<void> {
    const now = Date.now();
    let purged = false;
    for (const secret of secrets.values()) {
      if (secret.deleteAfter !== undefined && secret.deleteAfter <= now) {
        secrets.delete(secret.name);
        purged = true;
      }
    }
    return purged ? persist() : Promise.resolve();
  }

  function find(secretId: string): StoredSecret {
    const secret =
      secrets.get(secretId) ??
      [...secrets.values()].find((candidate) => candidate.arn === secretId || candidate.arn.slice(0, -7) === secretId);
    if (!secret) throw new AwsServiceError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
    return secret;
  }

  function findLive(secretId: string): StoredSecret {
    const secret = find(secretId);
    if (secret.deletedAt !== undefined) throw new AwsServiceError('InvalidRequestException', MARKED_FOR_DELETION);
    return secret;
  }

  /** Adds a version as AWSCURRENT; the old current becomes AWSPREVIOUS and older ones go. */
  function addVersion(secret: StoredSecret, id: string, value: string, now: number): void {
    const current = secret.versions.find((version) => version.stages.includes('AWSCURRENT'));
    secret.versions = secret.versions.filter((version) => version === current);
    if (current) current.stages = ['AWSPREVIOUS'];
    secret.versions.push({ id, value, stages: ['AWSCURRENT'], created: now });
    secret.changed = now;
  }

  const operations: Record<string, (input: Record<string, unknown>) => Promise<unknown>> = {
    async CreateSecret(input) {
      const name = requiredString(input, 'Name');
      if (!NAME.test(name)) throw new AwsServiceError('ValidationException', 'Name must match [A-Za-z0-9/_+=.@-]{1,512}');
      rejectBinary(input);
      const existing = secrets.get(name);
      if (existing?.deletedAt !== undefined) {
        throw new AwsServiceError(
          'InvalidRequestException',
          "You can't create this secret because a secret with this name is already scheduled for deletion.",
        );
      }
      if (existing) throw new AwsServiceError('ResourceExistsException', `The operation failed because the secret ${name} already exists.`);
      const now = Date.now();
      const secret: StoredSecret = { name, arn: arnFor(name), created: now, changed: now, versions: [] };
      const description = optionalString(input, 'Description');
      if (description !== undefined) secret.description = description;
      const value = optionalString(input, 'SecretString');
      const versionId = optionalString(input, 'ClientRequestToken') ?? randomUUID();
      if (value !== undefined) addVersion(secret, versionId, value, now);
      secrets.set(name, secret);
      await persist();
      return { ARN: secret.arn, Name: name, ...(value !== undefined ? { VersionId: versionId } : {}) };
    },

    async PutSecretValue(input) {
      const secret = findLive(requiredString(input, 'SecretId'));
      rejectBinary(input);
      if (input.VersionStages !== undefined) {
        throw new AwsServiceError('InvalidParameterException', 'VersionStages is not supported by the local Secrets Manager');
      }
      const value = requiredString(input, 'SecretString');
      const versionId = optionalString(input, 'ClientRequestToken') ?? randomUUID();
      const same = secret.versions.find((version) => version.id === versionId);
      if (same && same.value !== value) {
        throw new AwsServiceError('ResourceExistsException', `A version with ClientRequestToken ${versionId} already exists with a different value.`);
      }
      // A retry with the same token and value is a no-op, as on AWS.
      if (!same) {
        addVersion(secret, versionId, value, Date.now());
        await persist();
      }
      return { ARN: secret.arn, Name: secret.name, VersionId: versionId, VersionStages: same?.stages ?? ['AWSCURRENT'] };
    },

    async GetSecretValue(input) {
      const secret = findLive(requiredString(input, 'SecretId'));
      const versionId = optionalString(input, 'VersionId');
      const stage = optionalString(input, 'VersionStage') ?? (versionId ? undefined : 'AWSCURRENT');
      const version = secret.versions.find(
        (candidate) => (!versionId || candidate.id === versionId) && (!stage || candidate.stages.includes(stage)),
      );
      if (!version) {
        throw new AwsServiceError(
          'ResourceNotFoundException',
          `Secrets Manager can't find the specified secret value for ${versionId ? `VersionId: ${versionId}` : `staging label: ${stage}`}`,
        );
      }
      return {
        ARN: secret.arn,
        Name: secret.name,
        VersionId: version.id,
        SecretString: version.value,
        VersionStages: [...version.stages],
        CreatedDate: seconds(version.created),
      };
    },

    async BatchGetSecretValue(input) {
      if (input.Filters !== undefined || !Array.isArray(input.SecretIdList)) {
        throw new AwsServiceError('InvalidParameterException', 'the local Secrets Manager supports BatchGetSecretValue with SecretIdList only');
      }
      const SecretValues: unknown[] = [];
      const Errors: unknown[] = [];
      for (const secretId of input.SecretIdList as unknown[]) {
        try {
          SecretValues.push(await operations.GetSecretValue!({ SecretId: secretId }));
        } catch (error) {
          if (!(error instanceof AwsServiceError)) throw error;
          Errors.push({ SecretId: secretId, ErrorCode: error.type, Message: error.message });
        }
      }
      return { SecretValues, Errors };
    },

    async DescribeSecret(input) {
      const secret = find(requiredString(input, 'SecretId'));
      return { ...summary(secret), VersionIdsToStages: versionStages(secret) };
    },

    async DeleteSecret(input) {
      const secret = find(requiredString(input, 'SecretId'));
      const force = input.ForceDeleteWithoutRecovery === true;
      const windowDays = input.RecoveryWindowInDays;
      if (force && windowDays !== undefined) {
        throw new AwsServiceError(
          'InvalidParameterException',
          "You can't use ForceDeleteWithoutRecovery in conjunction with RecoveryWindowInDays.",
        );
      }
      if (windowDays !== undefined && !(Number.isInteger(windowDays) && (windowDays as number) >= 7 && (windowDays as number) <= 30)) {
        throw new AwsServiceError('InvalidParameterException', 'RecoveryWindowInDays must be between 7 and 30 days.');
      }
      const now = Date.now();
      if (force) {
        secrets.delete(secret.name);
        await persist();
        return { ARN: secret.arn, Name: secret.name, DeletionDate: seconds(now) };
      }
      if (secret.deletedAt !== undefined) throw new AwsServiceError('InvalidRequestException', MARKED_FOR_DELETION);
      secret.deletedAt = now;
      secret.deleteAfter = now + ((windowDays as number | undefined) ?? 30) * DAY_MS;
      await persist();
      return { ARN: secret.arn, Name: secret.name, DeletionDate: seconds(secret.deleteAfter) };
    },

    async RestoreSecret(input) {
      const secret = find(requiredString(input, 'SecretId'));
      delete secret.deletedAt;
      delete secret.deleteAfter;
      await persist();
      return { ARN: secret.arn, Name: secret.name };
    },

    async ListSecrets(input) {
      const maxResults = input.MaxResults ?? 100;
      if (!Number.isInteger(maxResults) || (maxResults as number) < 1 || (maxResults as number) > 100) {
        throw new AwsServiceError('ValidationException', 'MaxResults must be between 1 and 100');
      }
      const descending = input.SortOrder === 'desc';
      const includeDeleted = input.IncludePlannedDeletion === true;
      let list = [...secrets.values()]
        .filter((secret) => (includeDeleted || secret.deletedAt === undefined) && matchesFilters(secret, input.Filters))
        .sort(byCreation);
      if (descending) list.reverse();
      const token = optionalString(input, 'NextToken');
      if (token) {
        const [created, name] = decodeToken(token);
        const marker = { created, name } as StoredSecret;
        list = list.filter((secret) => (descending ? byCreation(secret, marker) < 0 : byCreation(secret, marker) > 0));
      }
      const page = list.slice(0, maxResults as number);
      const last = page.at(-1);
      return {
        SecretList: page.map((secret) => ({ ...summary(secret), SecretVersionsToStages: versionStages(secret) })),
        ...(list.length > page.length && last ? { NextToken: encodeToken(last) } : {}),
      };
    },
  };

  return {
    operations: Object.fromEntries(
      Object.entries(operations).map(([name, operation]) => [
        name,
        async (input: Record<string, unknown>) => {
          await purgeExpired();
          return operation(input);
        },
      ]),
    ),
    flush,
  };
}
