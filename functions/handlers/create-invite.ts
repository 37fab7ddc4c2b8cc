/** POST /invites: an admin invites someone into their organization or to found a new one. */
import { IdempotencyHeaders } from '#contracts/common';
import { CreateInviteBody } from '#contracts/identity';
import { inviteUser } from '#core/invites';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(
  routeOf('POST /invites'),
  { body: CreateInviteBody, headers: IdempotencyHeaders },
  async ({ principal, body, headers, rawBody }) => {
    const idempotencyKey = headers['idempotency-key'];
    const invite = await inviteUser(principal, body, { idempotencyKey, rawBody });
    const { id, email, role, organization_id } = invite;
    return {
      status: 201,
      body: { id, email, role, organization_id },
      headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : undefined,
    };
  },
);
