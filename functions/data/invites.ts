/** Invites: pending memberships redeemed at the invitee's first sign-in. */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { Invite, InviteRequest, InviteStore } from '#core/invites';
import type { Role } from '#core/principal';
import { cancellationReasons, dynamo, queryAll, transactWrite } from './dynamo';
import { entity } from './entity';
import { keys } from './keys';
import { config } from '#kit/config';

/** A member's role, as invites and users store it. */
export const roleSchema = z.enum(['admin', 'member']) satisfies z.ZodType<Role>;

const inviteSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: roleSchema,
  organization_id: z.string(),
  founder: z.boolean(),
  status: z.enum(['pending', 'redeemed']),
  created_at: z.string(),
  invited_by: z.string(),
}) satisfies z.ZodType<Invite>;

/** An invite, filed under its email address. */
const inviteEntity = entity('Invite', inviteSchema);

/** The first request of an idempotency key, with the invite it created. */
const inviteRequestEntity = entity('InviteRequest', z.object({ body_sha256: z.string(), invite: inviteSchema }));

function inviteItem(invite: Invite) {
  return { ...keys.invite(invite.email, invite.created_at, invite.id), type: 'Invite', ...invite };
}

/** Stores a new pending invite. */
export async function putInvite(invite: Invite): Promise<void> {
  await dynamo.send(new PutCommand({ TableName: config.tableName, Item: inviteItem(invite) }));
}

/**
 * Stores a new pending invite and its idempotency record in one transaction. When the
 * organization used the key before, writes nothing and returns the first request.
 */
export async function putInviteOnce(
  organizationId: string,
  invite: Invite,
  request: InviteRequest,
): Promise<{ bodySha256: string; invite: Invite } | undefined> {
  try {
    await transactWrite({
      TransactItems: [
        {
          Put: {
            TableName: config.tableName,
            Item: {
              ...keys.inviteRequest(organizationId, request.idempotencyKey),
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
    return undefined;
  } catch (error) {
    const earlier = cancellationReasons(error)?.[0]?.item;
    if (!earlier) throw error;
    const first = inviteRequestEntity.parse(earlier);
    return { bodySha256: first.body_sha256, invite: first.invite };
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
  return items.map(inviteEntity.parse);
}

/** The invites `organizationId` sends (`core/invites.ts` declares the store). */
export function inviteStore(organizationId: string): InviteStore {
  return {
    put: putInvite,
    putOnce: (invite, request) => putInviteOnce(organizationId, invite, request),
  };
}
