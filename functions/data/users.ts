/**
 * Users and organizations: who belongs where, created when an invite is redeemed. Here
 * too the identity store meets its parts (API key lookups, pending invites).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { config } from '#kit/config';
import type { Grant, IdentityStore, User } from '#core/identity';
import { cancellationReasons, dynamo, transactWrite } from './dynamo';
import { entity } from './entity';
import { pendingInvites, roleSchema } from './invites';
import { keys } from './keys';
import { lookupKey, touchKey } from './tokens';

/** A user's membership item. */
const userEntity = entity(
  'User',
  z.object({
    id: z.string(),
    email: z.string(),
    organization_id: z.string(),
    role: roleSchema,
    created_at: z.string(),
  }) satisfies z.ZodType<User>,
);

/** A user by identity-provider subject, read consistently (membership decides access). */
export async function getUser(userId: string): Promise<User | undefined> {
  const result = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.user(userId), ConsistentRead: true }),
  );
  return userEntity.parseOptional(result.Item);
}

/**
 * Makes the user a member in one transaction: the user item, the organization when the
 * grant founds one, and the invite marked redeemed. Returns false when another request
 * redeemed first (the caller re-reads the user).
 */
export async function joinOrganization(user: User, grant: Grant): Promise<boolean> {
  const now = user.created_at;
  const founds = 'founderOf' in grant || grant.invite.founder;
  const organizationId = user.organization_id;
  try {
    await transactWrite({
      TransactItems: [
        {
          Put: {
            TableName: config.tableName,
            Item: { ...keys.user(user.id), type: 'User', ...user },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        founds
          ? {
              Put: {
                TableName: config.tableName,
                Item: {
                  ...keys.organization(organizationId),
                  type: 'Organization',
                  id: organizationId,
                  created_at: now,
                  founder: user.id,
                  invocation_count: 0,
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            }
          : {
              ConditionCheck: {
                TableName: config.tableName,
                Key: keys.organization(organizationId),
                ConditionExpression: 'attribute_exists(pk)',
              },
            },
        ...('invite' in grant
          ? [
              {
                Update: {
                  TableName: config.tableName,
                  Key: keys.invite(grant.invite.email, grant.invite.created_at, grant.invite.id),
                  UpdateExpression: 'SET #status = :redeemed, redeemed_by = :user, redeemed_at = :now',
                  ConditionExpression: '#status = :pending',
                  ExpressionAttributeNames: { '#status': 'status' },
                  ExpressionAttributeValues: { ':redeemed': 'redeemed', ':pending': 'pending', ':user': user.id, ':now': now },
                },
              },
            ]
          : []),
      ],
    });
    return true;
  } catch (error) {
    if (cancellationReasons(error)?.some((reason) => reason.code === 'ConditionalCheckFailed')) return false;
    throw error;
  }
}

/** Credentials and memberships, for authentication (`core/identity.ts` declares the store). */
export function identityStore(): IdentityStore {
  return { lookupKey, touchKey, getUser, joinOrganization, pendingInvites };
}
