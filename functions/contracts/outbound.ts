/** Sending what happened where users already look: /webhooks and /integrations/otlp. */
import { z } from 'zod';
import { routeOf } from '#functions/routes';
import { WEBHOOK_EVENTS } from '#core/webhooks';
import { Timestamp } from './common';
import { defineOperation } from './operation';

const digits = (name: string) => z.string().regex(/^\d{1,10}$/, `${name} must be a whole number`).transform(Number);

/** A signed cursor from a previous page's `next_cursor`. */
const SignedCursor = z.string().min(1).max(2048);

const TargetUrl = z.string().min(1).max(2048);

export const WebhookEventType = z.enum(WEBHOOK_EVENTS);

export const CreateWebhookBody = z.strictObject({
  url: TargetUrl,
  events: z
    .array(WebhookEventType)
    .min(1, 'events must name at least one event type')
    .refine((events) => new Set(events).size === events.length, 'events must not repeat a type')
    .optional(),
});

export const WebhookIdParams = z.object({ id: z.string().min(1).max(64) });

export const Webhook = z.object({ id: z.string(), url: z.string(), events: z.array(WebhookEventType), created_at: Timestamp });

export const CreatedWebhook = Webhook.extend({
  secret: z.string().describe('`whsec_` and the base64 of 32 random bytes: the signing key of every delivery. Shown only here.'),
});

export const WebhooksResponse = z.object({ webhooks: z.array(Webhook) });

export const ListDeliveriesQuery = z.object({
  after: SignedCursor.optional(),
  limit: digits('limit').pipe(z.int().min(1).max(100)).default(20),
});

export const DeliveryAttempt = z.object({
  event_id: z.string().describe('The `webhook-id` header: the same on every try of one event.'),
  invocation_key: z.string(),
  type: WebhookEventType,
  attempt: z.int().min(1),
  status_code: z.int().optional().describe("The receiver's answer; absent when there was none."),
  error: z.string().optional().describe('Why there was no answer (connection refused, no answer within 10 s, …).'),
  time: Timestamp.describe('When the try ended.'),
});

export const DeliveriesResponse = z.object({ deliveries: z.array(DeliveryAttempt), next_cursor: z.string().optional() });

const HeaderName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/, 'header names must be HTTP tokens of at most 256 characters');

export const OtlpSettingsBody = z.strictObject({
  endpoint: TargetUrl.describe('An OTLP/HTTP traces URL, used as given; it must end in `/v1/traces`.'),
  headers: z
    .record(HeaderName, z.string().max(8192))
    .refine((headers) => Object.keys(headers).length <= 32, 'at most 32 headers')
    .optional()
    .describe('Sent with every export. Values may hold `{{secret:NAME}}` references, resolved only when sending.'),
  payloads: z.boolean().optional().describe('Export span inputs and outputs (redacted, at most 64 KiB each). Default false.'),
});

export const OtlpSettings = z.object({
  endpoint: z.string(),
  headers: z.record(z.string(), z.string()).optional(),
  payloads: z.boolean(),
});

const DELIVERY =
  'Every outcome of the subscribed types is POSTed at least once, signed by the Standard Webhooks specification (`webhook-id`, `webhook-timestamp`, `webhook-signature`), with body `{"type", "timestamp", "data"}` where `data` is the invocation summary (with `failure` when it failed). A non-2xx answer or none within 10 s is retried with exponential backoff for over an hour.';

const URL_RULES = 'The URL must be https (http to loopback addresses only in the local cloud), and no address it names or resolves to may be link-local or the metadata service (169.254.0.0/16, fd00:ec2::254): 400 otherwise.';

export const createWebhookOperation = defineOperation({
  route: routeOf('POST /webhooks'),
  tag: 'Webhooks',
  summary: 'Register a webhook for invocation outcomes',
  description: `${DELIVERY} ${URL_RULES} \`events\` defaults to both types. At most 10 webhooks per organization (400 beyond).`,
  input: { body: CreateWebhookBody },
  responses: { 201: { description: 'Registered; `secret` is shown only in this answer.', body: CreatedWebhook } },
  errors: [],
});

export const listWebhooksOperation = defineOperation({
  route: routeOf('GET /webhooks'),
  tag: 'Webhooks',
  summary: "List the organization's webhooks",
  description: 'Oldest first. Signing secrets are never shown again.',
  input: {},
  responses: { 200: { description: 'Every webhook.', body: WebhooksResponse } },
  errors: [],
});

export const getWebhookOperation = defineOperation({
  route: routeOf('GET /webhooks/{id}'),
  tag: 'Webhooks',
  summary: 'Read a webhook',
  input: { params: WebhookIdParams },
  responses: { 200: { description: 'The webhook, without its secret.', body: Webhook } },
  errors: [404],
});

export const deleteWebhookOperation = defineOperation({
  route: routeOf('DELETE /webhooks/{id}'),
  tag: 'Webhooks',
  summary: 'Delete a webhook',
  description: 'Deliveries still retrying stop at their next try.',
  input: { params: WebhookIdParams },
  responses: { 204: { description: 'Deleted.' } },
  errors: [404],
});

export const listDeliveriesOperation = defineOperation({
  route: routeOf('GET /webhooks/{id}/deliveries'),
  tag: 'Webhooks',
  summary: "A webhook's delivery tries, newest first",
  description: 'One entry per try. `limit` is 1 to 100 (default 20); pass `next_cursor` as `after` for the next page.',
  input: { params: WebhookIdParams, query: ListDeliveriesQuery },
  responses: { 200: { description: 'A page of delivery tries.', body: DeliveriesResponse } },
  errors: [404],
});

const EXPORT =
  'Every finished invocation is exported at least once as one OTLP trace (OTLP/HTTP protobuf) with the GenAI semantic conventions: a root `invoke_agent <agent_name>` span, `chat <model>` spans for model calls and `execute_tool <tool>` spans for tool calls, of every attempt. A failing endpoint is retried like webhook deliveries and never affects runs.';

export const putOtlpOperation = defineOperation({
  route: routeOf('PUT /integrations/otlp'),
  tag: 'Integrations',
  summary: 'Export every finished invocation as an OTLP trace',
  description: `${EXPORT} ${URL_RULES} A malformed or unknown secret reference in \`headers\` gives 400.`,
  input: { body: OtlpSettingsBody },
  responses: { 200: { description: 'The settings as stored, references unresolved.', body: OtlpSettings } },
  errors: [],
});

export const getOtlpOperation = defineOperation({
  route: routeOf('GET /integrations/otlp'),
  tag: 'Integrations',
  summary: 'Read the OTLP export settings',
  input: {},
  responses: { 200: { description: 'The settings as stored, references unresolved.', body: OtlpSettings } },
  errors: [404],
});

export const deleteOtlpOperation = defineOperation({
  route: routeOf('DELETE /integrations/otlp'),
  tag: 'Integrations',
  summary: 'Stop exporting traces',
  description: 'Exports still retrying stop at their next try. Repeating it is safe.',
  input: {},
  responses: { 204: { description: 'Removed (or there was nothing to remove).' } },
  errors: [],
});
