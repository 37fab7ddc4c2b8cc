/** Who is calling: a signed-in user, or an organization API key. */

export type Role = 'admin' | 'member';

export interface UserPrincipal {
  kind: 'user';
  organizationId: string;
  user: { id: string; email: string; role: Role };
}

export interface ApiKeyPrincipal {
  kind: 'api_key';
  organizationId: string;
  apiKey: { id: string; name: string };
}

export type Principal = UserPrincipal | ApiKeyPrincipal;
