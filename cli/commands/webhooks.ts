/** Webhooks: create (the signing secret is shown once), list, show, delete, and their delivery attempts. */
import type { Webhook, WebhookDelivery, WebhookEventType } from '../../client/types';
import { UsageError } from '../errors';
import { fields, table } from '../render';
import { intOption, output, PAGE_OPTIONS, showList, stringOption, write, type Command, type Context } from './shared';

const EVENT_TYPES: readonly WebhookEventType[] = ['invocation.succeeded', 'invocation.failed'];

/** `--events a,b` as a list of known event types; undefined when not given (the service's default: both). */
function eventsOption(context: Context): WebhookEventType[] | undefined {
  const text = stringOption(context, 'events');
  if (text === undefined) return undefined;
  const events = [...new Set(text.split(',').map((event) => event.trim()).filter(Boolean))];
  const unknown = events.find((event) => !EVENT_TYPES.includes(event as WebhookEventType));
  if (events.length === 0 || unknown !== undefined) {
    throw new UsageError(`--events must be a comma-separated list of ${EVENT_TYPES.join(', ')}${unknown !== undefined ? `, not "${unknown}"` : ''}`);
  }
  return events as WebhookEventType[];
}

/** What one attempt got: the receiver's status, or why there was none. */
export function deliveryResult(delivery: WebhookDelivery): string {
  if (delivery.status_code !== undefined) return String(delivery.status_code);
  return delivery.error !== undefined ? `error: ${delivery.error}` : '-';
}

function webhookFields(webhook: Webhook): string {
  return fields([['id', webhook.id], ['url', webhook.url], ['events', webhook.events.join(', ')], ['created', webhook.created_at]]);
}

export const webhookCommands: Command[] = [
  {
    name: 'webhooks list',
    summary: 'the organization\'s webhooks',
    async run(context) {
      const { webhooks } = await (await context.client()).webhooks.list();
      output(context, { webhooks }, () => table(webhooks, [
        { header: 'id', value: (w) => w.id },
        { header: 'url', value: (w) => w.url, max: 60 },
        { header: 'events', value: (w) => w.events.join(',') },
        { header: 'created', value: (w) => w.created_at },
      ]));
    },
  },
  {
    name: 'webhooks show',
    args: '<id>',
    summary: 'one webhook',
    positionals: [1, 1],
    async run(context) {
      const webhook = await (await context.client()).webhooks.get(context.positionals[0]!);
      output(context, webhook, () => webhookFields(webhook));
    },
  },
  {
    name: 'webhooks create',
    // The URL is an argument: --url names the service.
    args: '<url>',
    summary: 'POST every invocation\'s outcome to an https URL (its signing secret is shown only now)',
    positionals: [1, 1],
    options: {
      events: { type: 'string', value: 'TYPES', help: `comma-separated, of ${EVENT_TYPES.join(', ')} (default both)` },
    },
    async run(context) {
      const url = context.positionals[0]!;
      const events = eventsOption(context);
      const created = await (await context.client()).webhooks.create({ url, ...(events ? { events } : {}) });
      output(context, created, () => `${created.secret}\n`);
      if (!context.json) {
        write(context.io.stderr, `Webhook ${created.id} for ${created.url} (${created.events.join(', ')}).\nIts signing secret (above) is shown only once: it will not be shown again.`);
      }
    },
  },
  {
    name: 'webhooks deliveries',
    args: '<id>',
    summary: 'a webhook\'s latest delivery attempts, newest first',
    positionals: [1, 1],
    options: PAGE_OPTIONS,
    async run(context) {
      const list = (await context.client()).webhooks.deliveries(context.positionals[0]!, { limit: intOption(context, 'limit', 1, 100), after: stringOption(context, 'after') });
      await showList(context, list, 'deliveries', (deliveries) => table(deliveries, [
        { header: 'time', value: (d) => d.time },
        { header: 'event', value: (d) => d.event_id, max: 40 },
        { header: 'invocation', value: (d) => d.invocation_key, max: 40 },
        { header: 'type', value: (d) => d.type },
        { header: 'attempt', value: (d) => d.attempt },
        { header: 'result', value: deliveryResult, max: 80 },
      ]));
    },
  },
  {
    name: 'webhooks delete',
    args: '<id>',
    summary: 'delete a webhook (its pending retries stop)',
    positionals: [1, 1],
    async run(context) {
      const id = context.positionals[0]!;
      await (await context.client()).webhooks.delete(id);
      output(context, { deleted: id }, () => `Deleted webhook ${id}`);
    },
  },
];
