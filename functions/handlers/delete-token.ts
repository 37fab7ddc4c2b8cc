/** DELETE /tokens/{id}: revokes an API key at once. */
import { TokenIdParams } from '#contracts/tokens';
import { deleteToken } from '#data/tokens';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(routeOf('DELETE /tokens/{id}'), { params: TokenIdParams }, async ({ principal, params }) => {
  await deleteToken(principal.organizationId, params.id);
  return { status: 204 };
});
