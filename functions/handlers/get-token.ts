/** GET /tokens/{id}: one API key's record. */
import { getTokenOperation } from '#contracts/tokens';
import { getToken } from '#data/tokens';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(getTokenOperation, async ({ principal, params }) => ({
  status: 200,
  body: await getToken(principal.organizationId, params.id),
}));
