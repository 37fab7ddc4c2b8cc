/** POST /secrets: stores a new secret; the answer shows it masked. */
import { CreateSecretBody } from '#contracts/secrets';
import { createSecret } from '#core/secrets';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(routeOf('POST /secrets'), { body: CreateSecretBody }, async ({ principal, body }) => ({
  status: 201,
  body: await createSecret(principal.organizationId, body.name, body.value),
}));
