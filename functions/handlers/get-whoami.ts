/** GET /whoami: what the credential authenticates. */
import { whoamiOperation } from '#contracts/identity';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(whoamiOperation, async ({ principal }) => {
  const organization_id = principal.organizationId;
  return {
    status: 200,
    body:
      principal.kind === 'user'
        ? { kind: principal.kind, organization_id, user: principal.user }
        : { kind: principal.kind, organization_id, api_key: principal.apiKey },
  };
});
