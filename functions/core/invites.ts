/** Inviting people: into the caller's organization, or as founder of a new one. */
import { ConflictError, ForbiddenError, NotFoundError } from './errors';
import { newId, sha256 } from '#kit/ids';
import type { Role, UserPrincipal } from './principal';

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
  idempotencyKey: string;
  bodySha256: string;
}

/** The invites one organization sends (founder invites included: the inviter's organization sends them). */
export interface InviteStore {
  /** Stores a new pending invite. */
  put(invite: Invite): Promise<void>;
  /**
   * Stores a new pending invite and its request together, once per idempotency key: when
   * the key was used before, stores nothing and returns the first request's body hash and invite.
   */
  putOnce(invite: Invite, request: InviteRequest): Promise<{ bodySha256: string; invite: Invite } | undefined>;
}

export interface InviteParams {
  email: string;
  role?: Role;
  organization_id?: string;
}

/** Creates a pending invite; replays the first one for a repeated `Idempotency-Key`. */
export async function inviteUser(
  store: InviteStore,
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
  if (!request.idempotencyKey) {
    await store.put(invite);
    return invite;
  }
  return putOnce(store, invite, { idempotencyKey: request.idempotencyKey, bodySha256: sha256(request.rawBody) });
}

/** The invite of the key's first request: this one, or an earlier one with the same body (409 otherwise). */
async function putOnce(store: InviteStore, invite: Invite, request: InviteRequest): Promise<Invite> {
  const earlier = await store.putOnce(invite, request);
  if (!earlier) return invite;
  if (earlier.bodySha256 !== request.bodySha256) {
    throw new ConflictError('Idempotency-Key was already used with a different body');
  }
  return earlier.invite;
}
