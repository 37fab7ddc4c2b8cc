/** PUT /secrets/{name}: rotates a secret's value. */
import { updateSecretOperation } from '#contracts/secrets';
import { rotateSecret } from '#core/secrets';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(updateSecretOperation, async ({ principal, params, body }) => ({
  status: 200,
  body: await rotateSecret(principal.organizationId, params.name, body.value),
}));
