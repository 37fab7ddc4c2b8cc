/**
 * Organization API keys. Each key is two items written and deleted together: the record
 * the organization lists, and a lookup item keyed by the key's hash that authentication
 * reads with one consistent GetItem (so a revoked key fails on its very next request).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { config } from '#kit/config';
import type { KeyLookup } from '#core/identity';
import type { Token, TokenStore } from '#core/tokens';
import { cancellationReasons, dynamo, queryPrefix, transactWrite } from './dynamo';
import { entity } from './entity';
import { keys } from './keys';

const tokenAttributes = {
  id: z.string(),
  name: z.string(),
  created_at: z.string(),
  last_used_at: z.string().optional(),
  key_prefix: z.string(),
};

/** A key's record, as the organization lists it. */
const tokenEntity = entity('Token', z.object(tokenAttributes) satisfies z.ZodType<Token>);

/** The record with the hash that names its lookup item (read only to revoke the key). */
const tokenWithHashEntity = entity('Token', z.object({ ...tokenAttributes, key_hash: z.string() }));

/** A key's lookup item: what authentication learns from the key's hash. */
const keyLookupEntity = entity(
  'ApiKey',
  z.object({
    organization_id: z.string(),
    token_id: z.string(),
    name: z.string(),
    last_used_at: z.string().optional(),
  }) satisfies z.ZodType<KeyLookup>,
);

/** Stores a new key's record and lookup item together. */
export async function putToken(organizationId: string, token: Token, keyHash: string): Promise<void> {
  const lookup: KeyLookup = { organization_id: organizationId, token_id: token.id, name: token.name };
  await transactWrite({
    TransactItems: [
      {
        Put: {
          TableName: config.tableName,
          Item: { ...keys.token(organizationId, token.id), type: 'Token', ...token, organization_id: organizationId, key_hash: keyHash },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          TableName: config.tableName,
          Item: { ...keys.apiKey(keyHash), type: 'ApiKey', ...lookup },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ],
  });
}

/** API keys of an organization, in id order. */
export async function listTokens(organizationId: string): Promise<Token[]> {
  return (await queryPrefix(keys.tokensOf(organizationId))).map(tokenEntity.parse);
}

async function getTokenItem(organizationId: string, tokenId: string): Promise<Record<string, unknown> | undefined> {
  const result = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.token(organizationId, tokenId), ConsistentRead: true }),
  );
  return result.Item;
}

/** One API key of an organization. */
export async function getToken(organizationId: string, tokenId: string): Promise<Token | undefined> {
  return tokenEntity.parseOptional(await getTokenItem(organizationId, tokenId));
}

/** Revokes a key: both items go in one transaction. False when the organization has no such key. */
export async function deleteToken(organizationId: string, tokenId: string): Promise<boolean> {
  const item = tokenWithHashEntity.parseOptional(await getTokenItem(organizationId, tokenId));
  if (!item) return false;
  try {
    await transactWrite({
      TransactItems: [
        {
          Delete: {
            TableName: config.tableName,
            Key: keys.token(organizationId, tokenId),
            ConditionExpression: 'attribute_exists(pk)',
          },
        },
        { Delete: { TableName: config.tableName, Key: keys.apiKey(item.key_hash) } },
      ],
    });
    return true;
  } catch (error) {
    // Revoked by another request meanwhile.
    if (cancellationReasons(error)?.[0]?.code === 'ConditionalCheckFailed') return false;
    throw error;
  }
}

/** The API keys of `organizationId` (`core/tokens.ts` declares the store). */
export function tokenStore(organizationId: string): TokenStore {
  return {
    put: (token, keyHash) => putToken(organizationId, token, keyHash),
    list: () => listTokens(organizationId),
    get: (tokenId) => getToken(organizationId, tokenId),
    delete: (tokenId) => deleteToken(organizationId, tokenId),
  };
}

/** The key behind a hash, read consistently so revocation takes effect at once. */
export async function lookupKey(keyHash: string): Promise<KeyLookup | undefined> {
  const result = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.apiKey(keyHash), ConsistentRead: true }),
  );
  return keyLookupEntity.parseOptional(result.Item);
}

/** Records a key's use on both items; skipped when the key was revoked meanwhile. */
export async function touchKey(keyHash: string, lookup: KeyLookup, now: string): Promise<void> {
  const stamp = {
    UpdateExpression: 'SET last_used_at = :now',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':now': now },
  };
  try {
    await transactWrite({
      TransactItems: [
        { Update: { TableName: config.tableName, Key: keys.apiKey(keyHash), ...stamp } },
        { Update: { TableName: config.tableName, Key: keys.token(lookup.organization_id, lookup.token_id), ...stamp } },
      ],
    });
  } catch (error) {
    if (!cancellationReasons(error)?.some((reason) => reason.code === 'ConditionalCheckFailed')) throw error;
  }
}
