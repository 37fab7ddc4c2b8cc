/** PUT /secrets/{name}: rotates a secret's value. */
import { updateSecretOperation } from '#contracts/secrets';
import { rotateSecret } from '#core/secrets';
import { secretStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(updateSecretOperation, async ({ principal, params, body }) => ({
  status: 200,
  body: await rotateSecret(secretStore(principal.organizationId), params.name, body.value),
}));
