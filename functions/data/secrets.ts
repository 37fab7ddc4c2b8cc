/**
 * Secret metadata: the name and masked value an organization may see, never the value
 * (that lives in Secrets Manager, `secret-values.ts`).
 */
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { config } from '#kit/config';
import type { SecretMetadata, SecretStore } from '#core/secrets';
import { dynamo, isConditionFailure, queryPrefix } from './dynamo';
import { entity } from './entity';
import { keys } from './keys';
import { deleteSecretValue, writeSecretValue } from './secret-values';

/** A secret's metadata item. */
const secretEntity = entity(
  'Secret',
  z.object({
    name: z.string(),
    masked_value: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  }) satisfies z.ZodType<SecretMetadata>,
);

/** Records a new secret; false when the organization already has one of that name. */
export async function insertSecretMetadata(organizationId: string, secret: SecretMetadata): Promise<boolean> {
  try {
    await dynamo.send(
      new PutCommand({
        TableName: config.tableName,
        Item: { ...keys.secret(organizationId, secret.name), type: 'Secret', ...secret },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Replaces the metadata of an existing secret; false when it does not exist. */
export async function replaceSecretMetadata(organizationId: string, secret: SecretMetadata): Promise<boolean> {
  try {
    await dynamo.send(
      new PutCommand({
        TableName: config.tableName,
        Item: { ...keys.secret(organizationId, secret.name), type: 'Secret', ...secret },
        ConditionExpression: 'attribute_exists(pk)',
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** One secret's metadata. */
export async function getSecretMetadata(organizationId: string, name: string): Promise<SecretMetadata | undefined> {
  const result = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.secret(organizationId, name), ConsistentRead: true }),
  );
  return secretEntity.parseOptional(result.Item);
}

/** Secrets of an organization, by name. */
export async function listSecretMetadata(organizationId: string): Promise<SecretMetadata[]> {
  return (await queryPrefix(keys.secretsOf(organizationId))).map(secretEntity.parse);
}

/** Removes a secret's metadata; false when it did not exist. */
export async function deleteSecretMetadata(organizationId: string, name: string): Promise<boolean> {
  try {
    await dynamo.send(
      new DeleteCommand({
        TableName: config.tableName,
        Key: keys.secret(organizationId, name),
        ConditionExpression: 'attribute_exists(pk)',
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** The secrets of `organizationId` (`core/secrets.ts` declares the store). */
export function secretStore(organizationId: string): SecretStore {
  return {
    insert: (metadata) => insertSecretMetadata(organizationId, metadata),
    replace: (metadata) => replaceSecretMetadata(organizationId, metadata),
    get: (name) => getSecretMetadata(organizationId, name),
    list: () => listSecretMetadata(organizationId),
    delete: (name) => deleteSecretMetadata(organizationId, name),
    writeValue: (name, value) => writeSecretValue(organizationId, name, value),
    deleteValue: (name) => deleteSecretValue(organizationId, name),
  };
}
