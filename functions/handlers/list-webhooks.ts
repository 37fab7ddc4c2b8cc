/** GET /webhooks: the organization's webhooks, oldest first, without their secrets. */
import { listWebhooksOperation } from '#contracts/outbound';
import { listWebhooks } from '#core/webhooks';
import { webhookStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(listWebhooksOperation, async ({ principal }) => ({
  status: 200,
  body: { webhooks: await listWebhooks(webhookStore(principal.organizationId)) },
}));
