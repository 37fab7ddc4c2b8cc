/**
 * Every key of the single table, declared once. Callers use these builders; no key string
 * appears anywhere else. The README's key schema table documents the same patterns.
 */

type Key = { pk: string; sk: string };

const org = (organizationId: string) => `ORG#${organizationId}`;

export const keys = {
  /** An organization: its quota counter and founder. */
  organization: (organizationId: string): Key => ({ pk: org(organizationId), sk: 'ORG' }),

  /** A user, by the identity provider's subject; holds the membership. */
  user: (userId: string): Key => ({ pk: `USER#${userId}`, sk: 'USER' }),

  /** Invites of an email address, oldest first. */
  invitesOf: (email: string) => ({ pk: `INVITE#${email}`, skPrefix: 'INVITE#' }),
  invite: (email: string, createdAt: string, inviteId: string): Key => ({
    pk: `INVITE#${email}`,
    sk: `INVITE#${createdAt}#${inviteId}`,
  }),
  /** An `Idempotency-Key` used on POST /invites within an organization. */
  inviteRequest: (organizationId: string, idempotencyKey: string): Key => ({
    pk: org(organizationId),
    sk: `INVITE_REQUEST#${idempotencyKey}`,
  }),

  /** API keys of an organization, by id. */
  tokensOf: (organizationId: string) => ({ pk: org(organizationId), skPrefix: 'TOKEN#' }),
  token: (organizationId: string, tokenId: string): Key => ({ pk: org(organizationId), sk: `TOKEN#${tokenId}` }),
  /** An API key by the SHA-256 of its value: what authentication reads. */
  apiKey: (keyHash: string): Key => ({ pk: `APIKEY#${keyHash}`, sk: 'APIKEY' }),

  /** Secret metadata of an organization (the value lives in Secrets Manager). */
  secretsOf: (organizationId: string) => ({ pk: org(organizationId), skPrefix: 'SECRET#' }),
  secret: (organizationId: string, name: string): Key => ({ pk: org(organizationId), sk: `SECRET#${name}` }),

  /** A fixed key the health check reads; it never exists. */
  health: (): Key => ({ pk: 'HEALTH', sk: 'HEALTH' }),
};
