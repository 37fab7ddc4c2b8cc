/**
 * An in-memory `IdentityStore` for the fast tests of `core/identity.ts`: API key lookups,
 * users, organizations and invites, with `joinOrganization` refusing as the table's
 * transaction does (the user exists, the organization is missing or already founded, the
 * invite is no longer pending), all or nothing.
 */
import type { IdentityStore, KeyLookup, User } from '#core/identity';
import type { Invite } from '#core/invites';

export interface MemoryIdentityStore extends IdentityStore {
  keys: Map<string, KeyLookup>;
  users: Map<string, User>;
  organizations: Set<string>;
  invites: Invite[];
  /** Every `touchKey` call's key hash and time. */
  touches: { keyHash: string; now: string }[];
  /** Called inside `joinOrganization` before its checks: a test's way to let another request win. */
  beforeJoin?: () => void;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function memoryIdentityStore(): MemoryIdentityStore {
  const store: MemoryIdentityStore = {
    keys: new Map(),
    users: new Map(),
    organizations: new Set(),
    invites: [],
    touches: [],
    async lookupKey(keyHash) {
      await turn();
      const lookup = store.keys.get(keyHash);
      return lookup && { ...lookup };
    },
    async touchKey(keyHash, _lookup, now) {
      await turn();
      const lookup = store.keys.get(keyHash);
      if (!lookup) return;
      store.keys.set(keyHash, { ...lookup, last_used_at: now });
      store.touches.push({ keyHash, now });
    },
    async getUser(userId) {
      await turn();
      const user = store.users.get(userId);
      return user && { ...user };
    },
    async joinOrganization(user, grant) {
      await turn();
      store.beforeJoin?.();
      const founds = 'founderOf' in grant || grant.invite.founder;
      if (store.users.has(user.id)) return false;
      if (founds === store.organizations.has(user.organization_id)) return false;
      const invite = 'invite' in grant ? store.invites.find((candidate) => candidate.id === grant.invite.id) : undefined;
      if ('invite' in grant && invite?.status !== 'pending') return false;
      store.users.set(user.id, { ...user });
      store.organizations.add(user.organization_id);
      if (invite) invite.status = 'redeemed';
      return true;
    },
    async pendingInvites(email) {
      await turn();
      return store.invites
        .filter((invite) => invite.email === email && invite.status === 'pending')
        .sort((a, b) => a.created_at.localeCompare(b.created_at))
        .map((invite) => ({ ...invite }));
    },
  };
  return store;
}
