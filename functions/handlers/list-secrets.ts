/** GET /secrets: the organization's secrets, masked. */
import { listSecretsOperation } from '#contracts/secrets';
import { listSecrets } from '#core/secrets';
import { secretStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(listSecretsOperation, async ({ principal }) => ({
  status: 200,
  body: { secrets: await listSecrets(secretStore(principal.organizationId)) },
}));
