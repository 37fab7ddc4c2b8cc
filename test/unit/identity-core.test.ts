/**
 * Turning credentials into principals (`core/identity.ts`) against an in-memory store: API
 * keys and their last-use stamp, memberships, invites redeemed on the first request, the
 * founder grant, and two first requests racing. No network.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ForbiddenError, UnauthenticatedError } from '#core/errors';
import { apiKeyPrincipal, userPrincipal } from '#core/identity';
import type { Invite } from '#core/invites';
import { sha256 } from '#kit/ids';
import { memoryIdentityStore } from '../fakes/memory-identity-store';

const key = 'ask_secret';
const lookup = { organization_id: 'org_a', token_id: 'tok_1', name: 'ci' };
const invite = (overrides: Partial<Invite> = {}): Invite => ({
  id: 'invite-1',
  email: 'new@example.com',
  role: 'member',
  organization_id: 'org_a',
  founder: false,
  status: 'pending',
  created_at: '2026-01-01T00:00:00.000Z',
  invited_by: 'user-0',
  ...overrides,
});
const claims = { sub: 'user-1', email: 'New@Example.com' };

beforeEach(() => {
  vi.stubEnv('FOUNDER_EMAILS', 'founder@example.com');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('API keys', () => {
  it('resolves a key to its organization and stamps its first use', async () => {
    const store = memoryIdentityStore();
    store.keys.set(sha256(key), lookup);
    const now = new Date('2026-01-01T00:00:00.000Z');

    const principal = await apiKeyPrincipal(store, key, now);

    expect(principal).toEqual({ kind: 'api_key', organizationId: 'org_a', apiKey: { id: 'tok_1', name: 'ci' } });
    expect(store.touches).toEqual([{ keyHash: sha256(key), now: now.toISOString() }]);
  });

  it('stamps a key at most once a minute', async () => {
    const store = memoryIdentityStore();
    store.keys.set(sha256(key), { ...lookup, last_used_at: '2026-01-01T00:00:00.000Z' });

    await apiKeyPrincipal(store, key, new Date('2026-01-01T00:00:59.999Z'));
    await apiKeyPrincipal(store, key, new Date('2026-01-01T00:01:00.000Z'));

    expect(store.touches.map((touch) => touch.now)).toEqual(['2026-01-01T00:01:00.000Z']);
  });

  it('answers 401 for an unknown or revoked key', async () => {
    const error = await apiKeyPrincipal(memoryIdentityStore(), key).catch((e) => e);

    expect(error).toBeInstanceOf(UnauthenticatedError);
    expect(error.message).toBe('API key is not valid');
  });
});

describe('signed-in users', () => {
  it('resolves an existing member without redeeming anything', async () => {
    const store = memoryIdentityStore();
    store.users.set('user-1', { id: 'user-1', email: 'new@example.com', organization_id: 'org_a', role: 'admin', created_at: 'x' });
    store.invites.push(invite());

    const principal = await userPrincipal(store, claims);

    expect(principal).toEqual({ kind: 'user', organizationId: 'org_a', user: { id: 'user-1', email: 'new@example.com', role: 'admin' } });
    expect(store.invites[0]!.status).toBe('pending');
  });

  it('redeems the oldest pending invite on the first request', async () => {
    const store = memoryIdentityStore();
    store.organizations.add('org_a').add('org_b');
    store.invites.push(invite({ id: 'invite-2', organization_id: 'org_b', created_at: '2026-01-02T00:00:00.000Z' }), invite());

    const principal = await userPrincipal(store, claims);

    expect(principal).toEqual({ kind: 'user', organizationId: 'org_a', user: { id: 'user-1', email: 'new@example.com', role: 'member' } });
    expect(store.invites.find((candidate) => candidate.id === 'invite-1')!.status).toBe('redeemed');
  });

  it('founds the organization a founder invite names', async () => {
    const store = memoryIdentityStore();
    store.invites.push(invite({ organization_id: 'org_new', founder: true, role: 'admin' }));

    const principal = await userPrincipal(store, claims);

    expect(principal).toMatchObject({ organizationId: 'org_new', user: { role: 'admin' } });
    expect(store.organizations.has('org_new')).toBe(true);
  });

  it('founds a new organization for a FOUNDER_EMAILS address', async () => {
    const store = memoryIdentityStore();

    const principal = await userPrincipal(store, { sub: 'user-1', email: 'Founder@Example.com' });

    expect(principal).toMatchObject({ kind: 'user', user: { email: 'founder@example.com', role: 'admin' } });
    expect(principal.organizationId).toMatch(/^org_/);
    expect(store.organizations.has(principal.organizationId)).toBe(true);
  });

  it('answers the membership the winner wrote when two first requests race', async () => {
    const store = memoryIdentityStore();
    store.organizations.add('org_a');
    store.invites.push(invite());
    store.beforeJoin = () => {
      store.beforeJoin = undefined;
      store.users.set('user-1', { id: 'user-1', email: 'new@example.com', organization_id: 'org_a', role: 'member', created_at: 'x' });
      store.invites[0]!.status = 'redeemed';
    };

    const principal = await userPrincipal(store, claims);

    expect(principal).toMatchObject({ organizationId: 'org_a', user: { id: 'user-1', role: 'member' } });
  });

  it('answers 403 not_provisioned without a membership, invite or founder grant', async () => {
    const store = memoryIdentityStore();

    const error = await userPrincipal(store, { sub: 'user-1', email: 'Stranger@Example.com' }).catch((e) => e);

    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error.code).toBe('not_provisioned');
    expect(error.message).toBe('stranger@example.com is not part of the private beta');
    expect(store.users.size).toBe(0);
  });
});
