/** GET /secrets/{name}: one secret, masked. */
import { SecretNameParams } from '#contracts/secrets';
import { readSecret } from '#core/secrets';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(routeOf('GET /secrets/{name}'), { params: SecretNameParams }, async ({ principal, params }) => ({
  status: 200,
  body: await readSecret(principal.organizationId, params.name),
}));
