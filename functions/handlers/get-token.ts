/** GET /tokens/{id}: one API key's record. */
import { TokenIdParams } from '#contracts/tokens';
import { getToken } from '#data/tokens';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(routeOf('GET /tokens/{id}'), { params: TokenIdParams }, async ({ principal, params }) => ({
  status: 200,
  body: await getToken(principal.organizationId, params.id),
}));
