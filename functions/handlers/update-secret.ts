/** PUT /secrets/{name}: rotates a secret's value. */
import { SecretNameParams, UpdateSecretBody } from '#contracts/secrets';
import { rotateSecret } from '#core/secrets';
import { routeOf } from '#functions/routes';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(
  routeOf('PUT /secrets/{name}'),
  { params: SecretNameParams, body: UpdateSecretBody },
  async ({ principal, params, body }) => ({
    status: 200,
    body: await rotateSecret(principal.organizationId, params.name, body.value),
  }),
);
