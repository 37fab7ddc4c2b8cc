/** POST /webhooks: registers a webhook; the answer is the only one showing its signing secret. */
import { createWebhookOperation } from '#contracts/outbound';
import { createWebhook } from '#core/webhooks';
import { webhookStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(createWebhookOperation, async ({ principal, body }) => ({
  status: 201,
  body: await createWebhook(webhookStore(principal.organizationId), body),
}));
