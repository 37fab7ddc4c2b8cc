/** POST /tokens: mints an API key; the response is the only place the key appears. */
import { createTokenOperation } from '#contracts/tokens';
import { mintToken } from '#core/tokens';
import { tokenStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(createTokenOperation, async ({ principal, body }) => {
  const { id, name, created_at, key } = await mintToken(tokenStore(principal.organizationId), body.name);
  return { status: 201, body: { id, name, created_at, key } };
});
