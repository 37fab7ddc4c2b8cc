/** Secret metadata: the name and masked value an organization may see, never the value. */
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#kit/config';
import { dynamo, isConditionFailure, queryPrefix } from './dynamo';
import { keys } from './keys';

export interface SecretMetadata {
  name: string;
  masked_value: string;
  created_at: string;
  updated_at: string;
}

const toMetadata = ({ name, masked_value, created_at, updated_at }: SecretMetadata): SecretMetadata => ({
  name,
  masked_value,
  created_at,
  updated_at,
});

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
  return result.Item ? toMetadata(result.Item as SecretMetadata) : undefined;
}

/** Secrets of an organization, by name. */
export async function listSecretMetadata(organizationId: string): Promise<SecretMetadata[]> {
  return (await queryPrefix(keys.secretsOf(organizationId))).map((item) => toMetadata(item as unknown as SecretMetadata));
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
