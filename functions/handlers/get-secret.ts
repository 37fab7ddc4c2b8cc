/** GET /secrets/{name}: one secret, masked. */
import { getSecretOperation } from '#contracts/secrets';
import { readSecret } from '#core/secrets';
import { secretStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(getSecretOperation, async ({ principal, params }) => ({
  status: 200,
  body: await readSecret(secretStore(principal.organizationId), params.name),
}));
