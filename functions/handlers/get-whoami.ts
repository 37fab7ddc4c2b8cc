/** GET /whoami: what the credential authenticates. */
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(routeOf('GET /whoami'), {}, async ({ principal }) => {
  const { kind, organizationId } = principal;
  const who = principal.kind === 'user' ? { user: principal.user } : { api_key: principal.apiKey };
  return { status: 200, body: { kind, organization_id: organizationId, ...who } };
});
