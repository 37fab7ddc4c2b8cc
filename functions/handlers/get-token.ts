/** GET /tokens/{id}: one API key's record. */
import { getTokenOperation } from '#contracts/tokens';
import { readToken } from '#core/tokens';
import { tokenStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(getTokenOperation, async ({ principal, params }) => ({
  status: 200,
  body: await readToken(tokenStore(principal.organizationId), params.id),
}));
