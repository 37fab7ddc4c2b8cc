/** GET /tokens: the organization's API keys (never the keys themselves). */
import { listTokensOperation } from '#contracts/tokens';
import { listTokens } from '#data/tokens';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(listTokensOperation, async ({ principal }) => ({
  status: 200,
  body: { tokens: await listTokens(principal.organizationId) },
}));
