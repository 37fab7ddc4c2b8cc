/**
 * Sending an invocation's outcome where the organization asked: to every subscribed
 * webhook (signed, by the Standard Webhooks specification) and to its OTLP export.
 *
 * Whoever records an outcome announces it (`announceOutcome`): one delivery per target,
 * each an execution of the delivery state machine named after the outcome and the target,
 * so announcing again (a rescue path finding the outcome recorded) starts nothing twice.
 * The recorder does not wait for any delivery: the outcome is visible, and the session free,
 * before the announcement starts. Each execution runs `deliver` once per try, and Step
 * Functions retries a failed try with exponential backoff for over an hour
 * (`workflow/definition.ts`).
 */
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { resolveReferences, createRedactor } from '#functions/agent/secrets';
import { secretReferences } from '#contracts/agent';
import { sha256 } from '#kit/ids';
import type { Logger } from '#kit/log';
import type { Attempt, Invocation } from './model';
import { otlpTraceRequest, type OtlpTraceInput } from './otlp-trace';
import type { OtlpSettings } from './otlp-settings';
import { postToTarget } from './outbound';
import { PAYLOAD_INLINE_BYTES, textPrefix, traceSummary, type StoredSpan, type SummarizedInvocation } from './traces';
import type { DeliveryAttempt, Webhook, WebhookEventType } from './webhooks';

/** Where one delivery goes. */
export type DeliveryTarget = { kind: 'webhook'; id: string } | { kind: 'otlp' };

/** The event a webhook receives as its body: the outcome and the invocation's summary. */
export interface OutcomeEvent {
  type: WebhookEventType;
  /** When the outcome was recorded. */
  timestamp: string;
  data: ReturnType<typeof traceSummary> & { failure?: Invocation['failure'] };
}

/** One delivery, as its execution carries it: the same on every try. */
export interface DeliveryOrder {
  invocation_key: string;
  target: DeliveryTarget;
  /** `webhook-id`: one per event and target, the same on every retry. */
  event_id: string;
  event: OutcomeEvent;
}

/** What announcing an outcome needs of one organization. */
export interface DeliveryStarter {
  /** The organization's webhooks and whether it exports traces: one read. */
  targets(): Promise<{ webhooks: Webhook[]; otlp: boolean }>;
  /** Starts a delivery, named by `name`; a second start of the same name changes nothing. */
  start(order: DeliveryOrder, name: string): Promise<void>;
}

/** An ended invocation, as much of it as its announcement tells. */
export type EndedInvocation = SummarizedInvocation & Pick<Invocation, 'failure'>;

/** The event type of an ended invocation. */
const typeOf = (invocation: Pick<Invocation, 'status'>): WebhookEventType => (invocation.status === 'SUCCEEDED' ? 'invocation.succeeded' : 'invocation.failed');

const targetKey = (target: DeliveryTarget) => (target.kind === 'webhook' ? `webhook:${target.id}` : 'otlp');

/**
 * Starts delivering an ended invocation's outcome to every target of its organization;
 * safe to repeat (each delivery is named by the outcome and its target). Returns the
 * number of deliveries it asked for.
 */
export async function announceOutcome(starter: DeliveryStarter, invocation: EndedInvocation): Promise<number> {
  if (invocation.status === 'RUNNING') return 0;
  const { webhooks, otlp } = await starter.targets();
  const type = typeOf(invocation);
  const targets: DeliveryTarget[] = [
    ...webhooks.filter((webhook) => webhook.events.includes(type)).map((webhook) => ({ kind: 'webhook' as const, id: webhook.id })),
    ...(otlp ? [{ kind: 'otlp' as const }] : []),
  ];
  if (targets.length === 0) return 0;
  const event: OutcomeEvent = {
    type,
    timestamp: invocation.ended_at ?? new Date().toISOString(),
    data: { ...traceSummary(invocation), ...(invocation.status === 'FAILED' && invocation.failure ? { failure: invocation.failure } : {}) },
  };
  // The acceptance time tells apart two invocations of one key (a deleted session frees its keys).
  const outcome = `${invocation.invocation_key}\n${invocation.started_at}`;
  await Promise.all(
    targets.map((target) => {
      const digest = sha256(`${outcome}\n${targetKey(target)}`);
      return starter.start({ invocation_key: invocation.invocation_key, target, event_id: `msg_${digest.slice(0, 32)}`, event }, `dlv-${digest.slice(0, 64)}`);
    }),
  );
  return targets.length;
}

/** A try that did not deliver: Step Functions retries it with backoff. */
export class DeliveryFailedError extends Error {
  override name = 'DeliveryFailedError';
}

/** What one try of a delivery reads and records, of one organization. */
export interface DeliveryStore {
  webhook(id: string): Promise<Webhook | undefined>;
  /** A webhook's signing secret (`whsec_…`). */
  signingSecret(id: string): Promise<string>;
  /** Counts a try of a delivery and returns its number, from 1. */
  nextAttempt(eventId: string): Promise<number>;
  /** Adds a try to a webhook's delivery log. */
  recordAttempt(webhookId: string, attempt: DeliveryAttempt): Promise<void>;
  otlpSettings(): Promise<OtlpSettings | undefined>;
  /** A secret's value, for the export's headers only. */
  secretValue(name: string): Promise<string>;
  /** What the export sends of an invocation: undefined when it is gone (its session deleted). */
  invocation(invocationKey: string): Promise<Invocation | undefined>;
  attempts(invocationKey: string): Promise<Attempt[]>;
  /** Up to `limit` spans of every attempt, oldest first, after `afterSk`. */
  spans(invocationKey: string, afterSk: string | undefined, limit: number): Promise<{ spans: StoredSpan[]; more: boolean }>;
  payload(invocationKey: string, spanId: string, part: 'input' | 'output', firstBytes?: number): Promise<Uint8Array | undefined>;
}

/** No answer within this long counts as none (CONTRACT.md). */
export const DELIVERY_TIMEOUT_MS = 10_000;

export type DeliveryResult = { delivered: true; attempt?: number } | { delivered: false; reason: string };

/**
 * One try of a delivery. A target that is gone (the webhook deleted, the export removed,
 * the invocation deleted with its session) ends it quietly; a try that reached no 2xx
 * answer throws DeliveryFailedError for the state machine to retry.
 */
export async function deliver(store: DeliveryStore, organizationId: string, order: DeliveryOrder, log: Logger): Promise<DeliveryResult> {
  return order.target.kind === 'webhook' ? deliverToWebhook(store, order, order.target.id, log) : exportTrace(store, organizationId, order, log);
}

async function deliverToWebhook(store: DeliveryStore, order: DeliveryOrder, webhookId: string, log: Logger): Promise<DeliveryResult> {
  const webhook = await store.webhook(webhookId);
  if (!webhook) return { delivered: false, reason: 'the webhook was deleted' };
  const secret = await store.signingSecret(webhookId);
  const attempt = await store.nextAttempt(order.event_id);
  const body = JSON.stringify(order.event);
  const sentAt = new Date();
  const headers = {
    'content-type': 'application/json',
    'webhook-id': order.event_id,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': new StandardWebhook(secret).sign(order.event_id, sentAt, body),
  };
  const result = await postToTarget(webhook.url, body, headers, DELIVERY_TIMEOUT_MS);
  await store.recordAttempt(webhookId, {
    event_id: order.event_id,
    invocation_key: order.invocation_key,
    type: order.event.type,
    attempt,
    ...('status' in result ? { status_code: result.status } : { error: result.error }),
    time: new Date().toISOString(),
  });
  const fields = { webhook_id: webhookId, event_id: order.event_id, invocation_key: order.invocation_key, attempt };
  if ('status' in result && result.status >= 200 && result.status < 300) {
    log.info('delivered a webhook event', { ...fields, status_code: result.status });
    return { delivered: true, attempt };
  }
  const why = 'status' in result ? `the webhook answered ${result.status}` : result.error;
  log.warn('a webhook delivery failed; it will be retried', { ...fields, reason: why });
  throw new DeliveryFailedError(why);
}

// Spans read per page when gathering a trace to export.
const EXPORT_PAGE = 500;

/** Everything the export sends of an invocation, payloads (at most 64 KiB each) when asked. */
async function exportInput(store: DeliveryStore, organizationId: string, invocation: Invocation, payloads: boolean): Promise<OtlpTraceInput> {
  const key = invocation.invocation_key;
  const attempts = await store.attempts(key);
  const stored: StoredSpan[] = [];
  for (let after: string | undefined, more = true; more; ) {
    const page = await store.spans(key, after, EXPORT_PAGE);
    stored.push(...page.spans);
    more = page.more && page.spans.length > 0;
    after = page.spans.at(-1)?.sk;
  }
  const text = async (spanId: string, part: 'input' | 'output') => {
    const bytes = await store.payload(key, spanId, part, PAYLOAD_INLINE_BYTES);
    return bytes ? textPrefix(bytes, PAYLOAD_INLINE_BYTES) : undefined;
  };
  const spans = await Promise.all(
    stored.map(async ({ id, type, name, parent_id, attempt, status, started_at, ended_at, usage }) => {
      const [input, output] = payloads ? await Promise.all([text(id, 'input'), text(id, 'output')]) : [undefined, undefined];
      return {
        id, type, name, parent_id, attempt, status, started_at, usage,
        ...(ended_at ? { ended_at } : {}),
        ...(input !== undefined ? { input } : {}),
        ...(output !== undefined ? { output } : {}),
      };
    }),
  );
  return {
    organizationId,
    invocation: {
      invocation_key: key,
      session_id: invocation.session_id,
      agent_name: invocation.agent_name,
      agent_revision: invocation.agent_revision,
      status: invocation.status,
      started_at: invocation.started_at,
      ...(invocation.ended_at ? { ended_at: invocation.ended_at } : {}),
      ...(invocation.failure ? { failure: invocation.failure } : {}),
      ...(invocation.model ? { model: invocation.model } : {}),
    },
    attempts: attempts.map(({ number, status, started_at, ended_at }) => ({ number, status, started_at, ...(ended_at ? { ended_at } : {}) })),
    spans,
    payloads,
  };
}

async function exportTrace(store: DeliveryStore, organizationId: string, order: DeliveryOrder, log: Logger): Promise<DeliveryResult> {
  const settings = await store.otlpSettings();
  if (!settings) return { delivered: false, reason: 'the OTLP export was removed' };
  const invocation = await store.invocation(order.invocation_key);
  if (!invocation || invocation.started_at !== order.event.data.started_at) return { delivered: false, reason: 'the invocation was deleted' };
  // Header secrets are resolved here and nowhere else; whatever this try records is redacted of them.
  const names = [...new Set(Object.values(settings.headers ?? {}).flatMap(secretReferences))];
  const secrets = new Map(await Promise.all(names.map(async (name) => [name, await store.secretValue(name)] as const)));
  const redactor = createRedactor(secrets);
  const fields = { invocation_key: order.invocation_key, event_id: order.event_id };
  let result;
  try {
    const headers = Object.fromEntries(Object.entries(settings.headers ?? {}).map(([name, value]) => [name, resolveReferences(value, secrets)]));
    const body = otlpTraceRequest(await exportInput(store, organizationId, invocation, settings.payloads));
    result = await postToTarget(settings.endpoint, body, { ...headers, 'content-type': 'application/x-protobuf' }, DELIVERY_TIMEOUT_MS);
  } catch (error) {
    result = { error: redactor.redact(error instanceof Error ? error.message : String(error)) };
  }
  if ('status' in result && result.status >= 200 && result.status < 300) {
    log.info('exported a trace', { ...fields, status_code: result.status });
    return { delivered: true };
  }
  const why = redactor.redact('status' in result ? `the OTLP endpoint answered ${result.status}` : result.error);
  log.warn('an OTLP export failed; it will be retried', { ...fields, reason: why });
  throw new DeliveryFailedError(why);
}
