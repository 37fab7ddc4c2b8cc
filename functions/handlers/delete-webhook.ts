/** DELETE /webhooks/{id}: deletes a webhook and its secret; its pending retries stop. */
import { deleteWebhookOperation } from '#contracts/outbound';
import { deleteWebhook } from '#core/webhooks';
import { webhookStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(deleteWebhookOperation, async ({ principal, params }) => {
  await deleteWebhook(webhookStore(principal.organizationId), params.id);
  return { status: 204 };
});
