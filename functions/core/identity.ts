/**
 * Turns a verified credential into a principal: an API key into its organization, a
 * user into their membership, redeeming an invite (or the founder grant) on first use.
 */
import { config } from '#kit/config';
import { ForbiddenError, UnauthenticatedError } from './errors';
import { newId, sha256 } from '#kit/ids';
import type { Invite } from './invites';
import type { ApiKeyPrincipal, Role, UserPrincipal } from './principal';

/** API keys start with this, which tells them apart from JWTs at a glance. */
export const API_KEY_PREFIX = 'ask_';

/** What authentication learns from an API key's hash. */
export interface KeyLookup {
  organization_id: string;
  token_id: string;
  name: string;
  last_used_at?: string;
}

/** A member of an organization, by identity-provider subject. */
export interface User {
  id: string;
  email: string;
  organization_id: string;
  role: Role;
  created_at: string;
}

/** What joining rests on: a stored invite, or the founder grant of FOUNDER_EMAILS. */
export type Grant = { invite: Invite } | { founderOf: string };

/**
 * Credentials and memberships. Unlike the other stores it is bound to no organization:
 * authentication runs before the organization is known, and is how it becomes known.
 */
export interface IdentityStore {
  /** The key behind a hash, read consistently so that revocation takes effect at once. */
  lookupKey(keyHash: string): Promise<KeyLookup | undefined>;
  /** Stamps a key's use; does nothing when the key was revoked meanwhile. */
  touchKey(keyHash: string, lookup: KeyLookup, now: string): Promise<void>;
  /** A user, read consistently (membership decides access). */
  getUser(userId: string): Promise<User | undefined>;
  /**
   * Makes the user a member, all or nothing: founding the organization or redeeming the
   * invite the grant names. False when another request redeemed first.
   */
  joinOrganization(user: User, grant: Grant): Promise<boolean>;
  /** Pending invites of an email address, oldest first. */
  pendingInvites(email: string): Promise<Invite[]>;
}

// last_used_at is kept to the minute: stamping every request would double its cost.
const LAST_USED_RESOLUTION_MS = 60_000;

/** The organization and key behind an API key; 401 when it is unknown or revoked. */
export async function apiKeyPrincipal(store: IdentityStore, key: string, now = new Date()): Promise<ApiKeyPrincipal> {
  const keyHash = sha256(key);
  const lookup = await store.lookupKey(keyHash);
  if (!lookup) throw new UnauthenticatedError('API key is not valid');
  const lastUsed = lookup.last_used_at ? Date.parse(lookup.last_used_at) : 0;
  if (now.getTime() - lastUsed >= LAST_USED_RESOLUTION_MS) await store.touchKey(keyHash, lookup, now.toISOString());
  return {
    kind: 'api_key',
    organizationId: lookup.organization_id,
    apiKey: { id: lookup.token_id, name: lookup.name },
  };
}

const toPrincipal = (user: User): UserPrincipal => ({
  kind: 'user',
  organizationId: user.organization_id,
  user: { id: user.id, email: user.email, role: user.role },
});

/** The membership of a signed-in user; redeems a pending invite on the first request. */
export async function userPrincipal(store: IdentityStore, claims: { sub: string; email: string }): Promise<UserPrincipal> {
  const existing = await store.getUser(claims.sub);
  if (existing) return toPrincipal(existing);

  const email = claims.email.toLowerCase();
  // First requests can race: a loser finds the invite gone or its write refused, and
  // re-reads the membership the winner wrote.
  for (let round = 0; round < 2; round++) {
    const grant = await grantFor(store, email);
    if (grant) {
      const user: User = {
        id: claims.sub,
        email,
        organization_id: 'invite' in grant ? grant.invite.organization_id : grant.founderOf,
        role: 'invite' in grant ? grant.invite.role : 'admin',
        created_at: new Date().toISOString(),
      };
      if (await store.joinOrganization(user, grant)) return toPrincipal(user);
    }
    const winner = await store.getUser(claims.sub);
    if (winner) return toPrincipal(winner);
    if (!grant) break;
  }
  throw new ForbiddenError(`${email} is not part of the private beta`, 'not_provisioned');
}

async function grantFor(store: IdentityStore, email: string): Promise<Grant | undefined> {
  const [invite] = await store.pendingInvites(email);
  if (invite) return { invite };
  if (config.founderEmails.includes(email)) return { founderOf: newId('org') };
  return undefined;
}
