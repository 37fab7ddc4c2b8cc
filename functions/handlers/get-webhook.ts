/** GET /webhooks/{id}: one webhook, without its secret. */
import { getWebhookOperation } from '#contracts/outbound';
import { readWebhook } from '#core/webhooks';
import { webhookStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(getWebhookOperation, async ({ principal, params }) => ({
  status: 200,
  body: await readWebhook(webhookStore(principal.organizationId), params.id),
}));
