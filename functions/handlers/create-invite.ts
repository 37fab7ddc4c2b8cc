/** POST /invites: an admin invites someone into their organization or to found a new one. */
import { createInviteOperation } from '#contracts/identity';
import { inviteUser } from '#core/invites';
import { inviteStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(createInviteOperation, async ({ principal, body, headers, rawBody }) => {
  const idempotencyKey = headers['idempotency-key'];
  const invite = await inviteUser(inviteStore(principal.organizationId), principal, body, { idempotencyKey, rawBody });
  const { id, email, role, organization_id } = invite;
  return {
    status: 201,
    body: { id, email, role, organization_id },
    headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : undefined,
  };
});
