/**
 * What one try of a delivery reads and records: the webhook and its signing secret, the
 * delivery's try count and log, and for the OTLP export the settings, header secrets and
 * the invocation's whole trace.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#kit/config';
import type { DeliveryStore } from '#core/deliveries';
import { listAttempts } from './attempts';
import { dynamo } from './dynamo';
import { getInvocation } from './invocations';
import { keys } from './keys';
import { deliveryLogExpiresAt, getOtlpSettings, getWebhook, signingSecretName } from './outbound';
import { readSecretValue } from './secret-values';
import { listSpans, readPayload } from './traces';

/** What one try of `organizationId`'s deliveries reads and records (`core/deliveries.ts` declares it). */
export function deliveryStore(organizationId: string): DeliveryStore {
  return {
    webhook: (id) => getWebhook(organizationId, id),
    signingSecret: (id) => readSecretValue(organizationId, signingSecretName(id)),
    nextAttempt: async (eventId) => {
      const { Attributes } = await dynamo.send(
        new UpdateCommand({
          TableName: config.tableName,
          Key: keys.deliveryCounter(organizationId, eventId),
          UpdateExpression: 'ADD attempts :one SET expires_at = :expires',
          ExpressionAttributeValues: { ':one': 1, ':expires': deliveryLogExpiresAt() },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return Number(Attributes?.attempts ?? 1);
    },
    recordAttempt: async (webhookId, attempt) => {
      await dynamo.send(
        new PutCommand({
          TableName: config.tableName,
          Item: {
            ...keys.deliveryAttempt(organizationId, webhookId, attempt.time, attempt.event_id, attempt.attempt),
            // `type` names the item's kind, as on every item; the event's type is `event_type`.
            ...attempt,
            type: 'DeliveryAttempt',
            event_type: attempt.type,
            expires_at: deliveryLogExpiresAt(),
          },
        }),
      );
    },
    otlpSettings: () => getOtlpSettings(organizationId),
    secretValue: (name) => readSecretValue(organizationId, name),
    invocation: (invocationKey) => getInvocation(organizationId, invocationKey),
    attempts: (invocationKey) => listAttempts(organizationId, invocationKey),
    spans: (invocationKey, afterSk, limit) => listSpans(organizationId, invocationKey, undefined, afterSk, limit),
    payload: (invocationKey, spanId, part, firstBytes) => readPayload(organizationId, invocationKey, spanId, part, firstBytes),
  };
}
