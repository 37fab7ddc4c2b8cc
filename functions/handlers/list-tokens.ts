/** GET /tokens: the organization's API keys (never the keys themselves). */
import { listTokens } from '#data/tokens';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(routeOf('GET /tokens'), {}, async ({ principal }) => ({
  status: 200,
  body: { tokens: await listTokens(principal.organizationId) },
}));
