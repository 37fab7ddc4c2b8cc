/** GET /secrets: the organization's secrets, masked. */
import { listSecrets } from '#core/secrets';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(routeOf('GET /secrets'), {}, async ({ principal }) => ({
  status: 200,
  body: { secrets: await listSecrets(principal.organizationId) },
}));
