/** DELETE /secrets/{name}: deletes a secret and its value. */
import { deleteSecretOperation } from '#contracts/secrets';
import { deleteSecret } from '#core/secrets';
import { secretStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(deleteSecretOperation, async ({ principal, params }) => {
  await deleteSecret(secretStore(principal.organizationId), params.name);
  return { status: 204 };
});
