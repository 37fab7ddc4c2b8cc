/** DELETE /tokens/{id}: revokes an API key at once. */
import { deleteTokenOperation } from '#contracts/tokens';
import { deleteToken } from '#data/tokens';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(deleteTokenOperation, async ({ principal, params }) => {
  await deleteToken(principal.organizationId, params.id);
  return { status: 204 };
});
