/** POST /secrets: stores a new secret; the answer shows it masked. */
import { createSecretOperation } from '#contracts/secrets';
import { createSecret } from '#core/secrets';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(createSecretOperation, async ({ principal, body }) => ({
  status: 201,
  body: await createSecret(principal.organizationId, body.name, body.value),
}));
