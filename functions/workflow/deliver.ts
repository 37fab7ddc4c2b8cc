/**
 * Delivery state machine task Deliver: one try of delivering an outcome to a webhook or
 * to the OTLP export. A try that gets no 2xx answer throws, and the state machine retries
 * it with backoff; a target that is gone ends the delivery quietly.
 */
import { deliver, type DeliveryResult } from '#core/deliveries';
import { deliveryStore } from '#functions/stores';
import { createLogger } from '#kit/log';
import type { DeliveryInput } from './definition';

export async function handler(event: DeliveryInput): Promise<DeliveryResult> {
  const { organization_id: organizationId, ...order } = event;
  const log = createLogger({ source: 'deliver' });
  return deliver(deliveryStore(organizationId), organizationId, order, log);
}
