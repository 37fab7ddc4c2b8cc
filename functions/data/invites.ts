/** Invites: pending memberships redeemed at the invitee's first sign-in. */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '#core/errors';
import type { Role } from '#core/principal';
import { cancellationReasons, dynamo, queryAll, transactWrite } from './dynamo';
import { keys } from './keys';
import { config } from '#kit/config';

export interface Invite {
  id: string;
  email: string;
  role: Role;
  organization_id: string;
  /** True when redeeming creates `organization_id` with the invitee as its founder. */
  founder: boolean;
  status: 'pending' | 'redeemed';
  created_at: string;
  invited_by: string;
}

/** The idempotency facts of a POST /invites that carried an `Idempotency-Key`. */
export interface InviteRequest {
  organizationId: string;
  idempotencyKey: string;
  bodySha256: string;
}

function inviteItem(invite: Invite) {
  return { ...keys.invite(invite.email, invite.created_at, invite.id), type: 'Invite', ...invite };
}

/**
 * Stores a new pending invite. With a request, the invite and the idempotency record are
 * written together: a replay returns the first invite, a different body is a conflict.
 */
export async function putInvite(invite: Invite, request?: InviteRequest): Promise<Invite> {
  if (!request) {
    await dynamo.send(new PutCommand({ TableName: config.tableName, Item: inviteItem(invite) }));
    return invite;
  }
  try {
    await transactWrite({
        TransactItems: [
          {
            Put: {
              TableName: config.tableName,
              Item: {
                ...keys.inviteRequest(request.organizationId, request.idempotencyKey),
                type: 'InviteRequest',
                body_sha256: request.bodySha256,
                invite,
              },
              ConditionExpression: 'attribute_not_exists(pk)',
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          { Put: { TableName: config.tableName, Item: inviteItem(invite) } },
        ],
    });
    return invite;
  } catch (error) {
    const earlier = cancellationReasons(error)?.[0]?.item;
    if (!earlier) throw error;
    if (earlier.body_sha256 !== request.bodySha256) {
      throw new ConflictError('Idempotency-Key was already used with a different body');
    }
    return earlier.invite as Invite;
  }
}

/** Pending invites of an email address, oldest first. */
export async function pendingInvites(email: string): Promise<Invite[]> {
  const { pk, skPrefix } = keys.invitesOf(email);
  // Paged to the end: with a filter, a page can hold only redeemed invites.
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    FilterExpression: '#status = :pending',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix, ':pending': 'pending' },
    ConsistentRead: true,
  });
  return items.map(toInvite);
}

function toInvite(item: Record<string, unknown>): Invite {
  const { id, email, role, organization_id, founder, status, created_at, invited_by } = item as unknown as Invite;
  return { id, email, role, organization_id, founder, status, created_at, invited_by };
}
