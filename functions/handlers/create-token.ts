/** POST /tokens: mints an API key; the response is the only place the key appears. */
import { CreateTokenBody } from '#contracts/tokens';
import { mintToken } from '#core/tokens';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(routeOf('POST /tokens'), { body: CreateTokenBody }, async ({ principal, body }) => {
  const { id, name, created_at, key } = await mintToken(principal.organizationId, body.name);
  return { status: 201, body: { id, name, created_at, key } };
});
