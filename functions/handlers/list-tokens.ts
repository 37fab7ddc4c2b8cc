/** GET /tokens: the organization's API keys (never the keys themselves). */
import { listTokensOperation } from '#contracts/tokens';
import { stores } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(listTokensOperation, async ({ principal }) => ({
  status: 200,
  body: { tokens: await stores.tokens(principal.organizationId).list() },
}));
