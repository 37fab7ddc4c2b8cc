/** POST /secrets: stores a new secret; the answer shows it masked. */
import { createSecretOperation } from '#contracts/secrets';
import { createSecret } from '#core/secrets';
import { secretStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(createSecretOperation, async ({ principal, body }) => ({
  status: 201,
  body: await createSecret(secretStore(principal.organizationId), body.name, body.value),
}));
