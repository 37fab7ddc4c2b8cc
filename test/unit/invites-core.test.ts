/**
 * The rules of inviting (`core/invites.ts`) against an in-memory store: who may invite
 * where, the defaults of founder and member invites, and `Idempotency-Key` replays and
 * conflicts. No network.
 */
import { describe, expect, it } from 'vitest';
import { ConflictError, ForbiddenError, NotFoundError } from '#core/errors';
import { inviteUser } from '#core/invites';
import type { UserPrincipal } from '#core/principal';
import { memoryInviteStore } from '../fakes/memory-invite-store';

const admin: UserPrincipal = { kind: 'user', organizationId: 'org_a', user: { id: 'user-1', email: 'admin@example.com', role: 'admin' } };
const member: UserPrincipal = { ...admin, user: { ...admin.user, role: 'member' } };
const plain = { rawBody: '{}' };

describe('inviting', () => {
  it('invites into the caller organization as a member by default', async () => {
    const store = memoryInviteStore();

    const invite = await inviteUser(store, admin, { email: 'New@Example.com', organization_id: 'org_a' }, plain);

    expect(invite).toMatchObject({ email: 'new@example.com', role: 'member', organization_id: 'org_a', founder: false, status: 'pending', invited_by: 'user-1' });
    expect(store.invites).toEqual([invite]);
  });

  it('invites a founder of a new organization as its admin', async () => {
    const store = memoryInviteStore();

    const invite = await inviteUser(store, admin, { email: 'founder@example.com' }, plain);

    expect(invite).toMatchObject({ role: 'admin', founder: true });
    expect(invite.organization_id).toMatch(/^org_/);
    expect(invite.organization_id).not.toBe('org_a');
  });

  it('refuses a member with admin_required, storing nothing', async () => {
    const store = memoryInviteStore();

    const error = await inviteUser(store, member, { email: 'x@example.com' }, plain).catch((e) => e);

    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error.code).toBe('admin_required');
    expect(store.invites).toEqual([]);
  });

  it('answers 404 for another organization', async () => {
    const error = await inviteUser(memoryInviteStore(), admin, { email: 'x@example.com', organization_id: 'org_b' }, plain).catch((e) => e);

    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toBe('organization org_b not found');
  });

  it('replays the first invite for a repeated Idempotency-Key with the same body', async () => {
    const store = memoryInviteStore();
    const request = { idempotencyKey: 'key-1', rawBody: '{"email":"x@example.com"}' };
    const first = await inviteUser(store, admin, { email: 'x@example.com' }, request);

    const again = await inviteUser(store, admin, { email: 'x@example.com' }, request);

    expect(again).toEqual(first);
    expect(store.invites).toHaveLength(1);
  });

  it('answers 409 for a repeated Idempotency-Key with another body', async () => {
    const store = memoryInviteStore();
    await inviteUser(store, admin, { email: 'x@example.com' }, { idempotencyKey: 'key-1', rawBody: '{"email":"x@example.com"}' });

    const error = await inviteUser(store, admin, { email: 'y@example.com' }, { idempotencyKey: 'key-1', rawBody: '{"email":"y@example.com"}' }).catch((e) => e);

    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toBe('Idempotency-Key was already used with a different body');
    expect(store.invites).toHaveLength(1);
  });
});
