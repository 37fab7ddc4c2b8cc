/** GET /tokens: the organization's API keys (never the keys themselves). */
import { listTokensOperation } from '#contracts/tokens';
import { tokenStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(listTokensOperation, async ({ principal }) => ({
  status: 200,
  body: { tokens: await tokenStore(principal.organizationId).list() },
}));
