/** GET /webhooks/{id}/deliveries: a webhook's delivery tries, newest first, by signed cursor. */
import { listDeliveriesOperation } from '#contracts/outbound';
import { readDeliveries } from '#core/webhooks';
import { webhookStore } from '#functions/stores';
import { defineHandler } from '#http/handler';

export const handler = defineHandler(listDeliveriesOperation, async ({ principal, params, query }) => ({
  status: 200,
  body: await readDeliveries(webhookStore(principal.organizationId), params.id, query.after, query.limit),
}));
