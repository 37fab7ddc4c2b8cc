/**
 * Organization API keys. Each key is two items written and deleted together: the record
 * the organization lists, and a lookup item keyed by the key's hash that authentication
 * reads with one consistent GetItem (so a revoked key fails on its very next request).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#kit/config';
import { cancellationReasons, dynamo, queryPrefix, transactWrite } from './dynamo';
import { keys } from './keys';

import type { Token, TokenStore } from '#core/tokens';

interface TokenItem extends Token {
  organization_id: string;
  key_hash: string;
}

/** What authentication learns from a key's hash. */
export interface KeyLookup {
  organization_id: string;
  token_id: string;
  name: string;
  last_used_at?: string;
}

const toToken = ({ id, name, created_at, last_used_at, key_prefix }: TokenItem): Token => ({
  id,
  name,
  created_at,
  key_prefix,
  ...(last_used_at ? { last_used_at } : {}),
});

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
  return (await queryPrefix(keys.tokensOf(organizationId))).map((item) => toToken(item as unknown as TokenItem));
}

async function getTokenItem(organizationId: string, tokenId: string): Promise<TokenItem | undefined> {
  const result = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.token(organizationId, tokenId), ConsistentRead: true }),
  );
  return result.Item as TokenItem | undefined;
}

/** One API key of an organization. */
export async function getToken(organizationId: string, tokenId: string): Promise<Token | undefined> {
  const item = await getTokenItem(organizationId, tokenId);
  return item && toToken(item);
}

/** Revokes a key: both items go in one transaction. False when the organization has no such key. */
export async function deleteToken(organizationId: string, tokenId: string): Promise<boolean> {
  const item = await getTokenItem(organizationId, tokenId);
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
  return result.Item as KeyLookup | undefined;
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
