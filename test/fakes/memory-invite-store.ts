/**
 * An in-memory `InviteStore` of one organization for the fast tests of `core/invites.ts`:
 * `putOnce` keeps the first request of each idempotency key, as the table's conditional
 * transaction does, all or nothing.
 */
import type { Invite, InviteStore } from '#core/invites';

export interface MemoryInviteStore extends InviteStore {
  invites: Invite[];
  /** First requests by idempotency key. */
  requests: Map<string, { bodySha256: string; invite: Invite }>;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function memoryInviteStore(): MemoryInviteStore {
  const store: MemoryInviteStore = {
    invites: [],
    requests: new Map(),
    async put(invite) {
      await turn();
      store.invites.push({ ...invite });
    },
    async putOnce(invite, request) {
      await turn();
      const earlier = store.requests.get(request.idempotencyKey);
      if (earlier) return { bodySha256: earlier.bodySha256, invite: { ...earlier.invite } };
      store.requests.set(request.idempotencyKey, { bodySha256: request.bodySha256, invite: { ...invite } });
      store.invites.push({ ...invite });
      return undefined;
    },
  };
  return store;
}
