/**
 * Where an organization sends what happened: its webhooks (items under its partition, the
 * count on the organization item, signing secrets in Secrets Manager), their delivery logs,
 * its OTLP export settings, and the executions of the delivery state machine.
 */
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { config } from '#kit/config';
import type { DeliveryOrder, DeliveryStarter } from '#core/deliveries';
import type { OtlpSettings, OtlpSettingsStore } from '#core/otlp-settings';
import { WEBHOOK_EVENTS, type DeliveryAttempt, type Webhook, type WebhookStore } from '#core/webhooks';
import type { DeliveryInput } from '#functions/workflow/definition';
import { cursorKey } from './cursor-key';
import { cancellationReasons, dynamo, queryPrefix, queryPrefixNewestFirst, transactWrite } from './dynamo';
import { entity } from './entity';
import { keys } from './keys';
import { deleteSecretValue, writeSecretValue } from './secret-values';
import { getSecretMetadata } from './secrets';

const webhookEntity = entity(
  'Webhook',
  z.object({ id: z.string(), url: z.string(), events: z.array(z.enum(WEBHOOK_EVENTS)), created_at: z.string() }) satisfies z.ZodType<Webhook>,
);

const otlpEntity = entity(
  'OtlpSettings',
  z.object({ endpoint: z.string(), headers: z.record(z.string(), z.string()).optional(), payloads: z.boolean() }) satisfies z.ZodType<OtlpSettings>,
);

/** A try in a webhook's delivery log; the item keeps the event's type as `event_type`. */
const deliveryEntity = entity(
  'DeliveryAttempt',
  z
    .object({
      event_id: z.string(),
      invocation_key: z.string(),
      event_type: z.enum(WEBHOOK_EVENTS),
      attempt: z.number(),
      status_code: z.number().optional(),
      error: z.string().optional(),
      time: z.string(),
    })
    .transform(({ event_type, ...attempt }): DeliveryAttempt => ({ ...attempt, type: event_type })),
);

// A delivery log and its counters are kept about as long as the deliveries can be retried
// and looked into: 30 days.
const DELIVERY_LOG_SECONDS = 30 * 86_400;
export const deliveryLogExpiresAt = () => Math.floor(Date.now() / 1000) + DELIVERY_LOG_SECONDS;

/** Signing secrets live beside the organization's secrets, under a name no secret of theirs can take (names hold no `/`). */
export const signingSecretName = (webhookId: string) => `webhooks/${webhookId}`;

async function insertWebhook(organizationId: string, webhook: Webhook, max: number): Promise<boolean> {
  try {
    await transactWrite({
      TransactItems: [
        {
          Put: {
            TableName: config.tableName,
            Item: { ...keys.webhook(organizationId, webhook.id), type: 'Webhook', ...webhook },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          // The count on the organization item makes the limit exact under concurrent creates.
          Update: {
            TableName: config.tableName,
            Key: keys.organization(organizationId),
            UpdateExpression: 'SET webhook_count = if_not_exists(webhook_count, :zero) + :one',
            ConditionExpression: 'attribute_not_exists(webhook_count) OR webhook_count < :max',
            ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': max },
          },
        },
      ],
    });
    return true;
  } catch (error) {
    if (conditionFailed(error)) return false;
    throw error;
  }
}

/** A transaction refused by one of its conditions (not by a conflict with another). */
const conditionFailed = (error: unknown) => cancellationReasons(error)?.some((reason) => reason.code === 'ConditionalCheckFailed') ?? false;

export async function getWebhook(organizationId: string, webhookId: string): Promise<Webhook | undefined> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: config.tableName, Key: keys.webhook(organizationId, webhookId), ConsistentRead: true }));
  return webhookEntity.parseOptional(Item);
}

async function listWebhooks(organizationId: string): Promise<Webhook[]> {
  const webhooks = (await queryPrefix(keys.webhooksOf(organizationId), { consistent: true })).map(webhookEntity.parse);
  return webhooks.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
}

async function deleteWebhook(organizationId: string, webhookId: string): Promise<boolean> {
  try {
    await transactWrite({
      TransactItems: [
        { Delete: { TableName: config.tableName, Key: keys.webhook(organizationId, webhookId), ConditionExpression: 'attribute_exists(pk)' } },
        {
          Update: {
            TableName: config.tableName,
            Key: keys.organization(organizationId),
            UpdateExpression: 'SET webhook_count = webhook_count - :one',
            ConditionExpression: 'webhook_count > :zero',
            ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
          },
        },
      ],
    });
    return true;
  } catch (error) {
    if (conditionFailed(error)) return false;
    throw error;
  }
}

async function listDeliveries(organizationId: string, webhookId: string, afterSk: string | undefined, limit: number) {
  const { items, more } = await queryPrefixNewestFirst(keys.deliveryLog(organizationId, webhookId), afterSk, limit);
  const last = items.at(-1)?.sk;
  return { deliveries: items.map(deliveryEntity.parse), more, ...(typeof last === 'string' ? { last } : {}) };
}

/** The webhooks of `organizationId` (`core/webhooks.ts` declares the store). */
export function webhookStore(organizationId: string): WebhookStore {
  return {
    organizationId,
    cursorKey,
    insert: (webhook, max) => insertWebhook(organizationId, webhook, max),
    get: (id) => getWebhook(organizationId, id),
    list: () => listWebhooks(organizationId),
    delete: (id) => deleteWebhook(organizationId, id),
    writeSecret: (id, secret) => writeSecretValue(organizationId, signingSecretName(id), secret),
    deleteSecret: (id) => deleteSecretValue(organizationId, signingSecretName(id)),
    deliveries: (id, after, limit) => listDeliveries(organizationId, id, after, limit),
  };
}

export async function getOtlpSettings(organizationId: string): Promise<OtlpSettings | undefined> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: config.tableName, Key: keys.otlpSettings(organizationId), ConsistentRead: true }));
  return otlpEntity.parseOptional(Item);
}

/** The OTLP export settings of `organizationId` (`core/otlp-settings.ts` declares the store). */
export function otlpSettingsStore(organizationId: string): OtlpSettingsStore {
  return {
    get: () => getOtlpSettings(organizationId),
    put: async (settings) => {
      await dynamo.send(new PutCommand({ TableName: config.tableName, Item: { ...keys.otlpSettings(organizationId), type: 'OtlpSettings', ...settings } }));
    },
    delete: async () => {
      await dynamo.send(new DeleteCommand({ TableName: config.tableName, Key: keys.otlpSettings(organizationId) }));
    },
    hasSecret: async (name) => (await getSecretMetadata(organizationId, name)) !== undefined,
  };
}

const sfn = new SFNClient({});

/** Starts one delivery's execution; a start of a name that exists (running or ended) changes nothing. */
async function startDelivery(organizationId: string, order: DeliveryOrder, name: string): Promise<void> {
  const input: DeliveryInput = { organization_id: organizationId, ...order };
  try {
    await sfn.send(new StartExecutionCommand({ stateMachineArn: config.deliveryStateMachineArn, name, input: JSON.stringify(input) }));
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ExecutionAlreadyExists')) throw error;
  }
}

/** What announcing `organizationId`'s outcomes needs (`core/deliveries.ts` declares it). */
export function deliveryStarter(organizationId: string): DeliveryStarter {
  return {
    targets: async () => {
      const items = await queryPrefix(keys.outboundOf(organizationId));
      const webhooks = items.filter((item) => item.type === 'Webhook').map(webhookEntity.parse);
      return { webhooks, otlp: items.some((item) => item.type === 'OtlpSettings') };
    },
    start: (order, name) => startDelivery(organizationId, order, name),
  };
}
