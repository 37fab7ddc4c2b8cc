/** DELETE /secrets/{name}: deletes a secret and its value. */
import { SecretNameParams } from '#contracts/secrets';
import { deleteSecret } from '#core/secrets';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(routeOf('DELETE /secrets/{name}'), { params: SecretNameParams }, async ({ principal, params }) => {
  await deleteSecret(principal.organizationId, params.name);
  return { status: 204 };
});
