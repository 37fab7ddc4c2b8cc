/** DELETE /tokens/{id}: revokes an API key at once. */
import { deleteTokenOperation } from '#contracts/tokens';
import { revokeToken } from '#core/tokens';
import { tokenStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(deleteTokenOperation, async ({ principal, params }) => {
  await revokeToken(tokenStore(principal.organizationId), params.id);
  return { status: 204 };
});
