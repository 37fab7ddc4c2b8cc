/** Inviting people: into the caller's organization, or as founder of a new one. */
import { ForbiddenError, NotFoundError } from './errors';
import { newId, sha256 } from '#kit/ids';
import type { Role, UserPrincipal } from './principal';
import { putInvite, type Invite } from '#data/invites';

export interface InviteParams {
  email: string;
  role?: Role;
  organization_id?: string;
}

/** Creates a pending invite; replays the first one for a repeated `Idempotency-Key`. */
export async function inviteUser(
  caller: UserPrincipal,
  params: InviteParams,
  request: { idempotencyKey?: string; rawBody: string },
): Promise<Invite> {
  if (caller.user.role !== 'admin') throw new ForbiddenError('only admins may invite', 'admin_required');
  if (params.organization_id !== undefined && params.organization_id !== caller.organizationId) {
    throw new NotFoundError(`organization ${params.organization_id} not found`);
  }
  const founder = params.organization_id === undefined;
  const invite: Invite = {
    id: newId('invite'),
    email: params.email.toLowerCase(),
    role: params.role ?? (founder ? 'admin' : 'member'),
    // A founder invite names its future organization now, so the response is complete.
    organization_id: founder ? newId('org') : caller.organizationId,
    founder,
    status: 'pending',
    created_at: new Date().toISOString(),
    invited_by: caller.user.id,
  };
  const idempotency = request.idempotencyKey
    ? { organizationId: caller.organizationId, idempotencyKey: request.idempotencyKey, bodySha256: sha256(request.rawBody) }
    : undefined;
  return putInvite(invite, idempotency);
}
