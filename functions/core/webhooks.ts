/**
 * Webhooks an organization registers (/webhooks) and the log of their deliveries. The
 * signing secret is generated here, shown once in the creation's answer and kept with the
 * other secret values (never in the table); deliveries sign with it (`deliveries.ts`).
 */
import { randomBytes } from 'node:crypto';
import { newId } from '#kit/ids';
import { sign, verify, type CursorScope } from './cursor';
import { InvalidInputError, NotFoundError } from './errors';
import { checkTargetUrl } from './outbound';

/** The outcomes a webhook may subscribe to. */
export const WEBHOOK_EVENTS = ['invocation.succeeded', 'invocation.failed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** Webhooks one organization may have at once (CONTRACT.md). */
export const MAX_WEBHOOKS = 10;

export interface Webhook {
  id: string;
  url: string;
  events: WebhookEventType[];
  created_at: string;
}

/** One delivery attempt as the log keeps it: `time` is when it ended. */
export interface DeliveryAttempt {
  event_id: string;
  invocation_key: string;
  type: WebhookEventType;
  attempt: number;
  status_code?: number;
  error?: string;
  time: string;
}

/** An organization's webhooks, their signing secrets and delivery logs. */
export interface WebhookStore extends CursorScope {
  /** Records a new webhook unless the organization has `max` already (false then). */
  insert(webhook: Webhook, max: number): Promise<boolean>;
  get(id: string): Promise<Webhook | undefined>;
  /** Every webhook, oldest first. */
  list(): Promise<Webhook[]>;
  /** Removes a webhook; false when there was none. */
  delete(id: string): Promise<boolean>;
  writeSecret(id: string, secret: string): Promise<void>;
  deleteSecret(id: string): Promise<void>;
  /** Up to `limit` delivery attempts of a webhook, newest first, after the store position `after`; where the page ended. */
  deliveries(id: string, after: string | undefined, limit: number): Promise<{ deliveries: DeliveryAttempt[]; more: boolean; last?: string }>;
}

/** `whsec_` and the base64 of 32 random bytes, as the Standard Webhooks specification writes secrets. */
function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

const notFound = (id: string) => new NotFoundError(`webhook ${id} not found`);

/** Registers a webhook; its answer is the only one that shows the signing secret. */
export async function createWebhook(store: WebhookStore, request: { url: string; events?: WebhookEventType[] }) {
  // Checked, and kept as given: the receiver's URL is the client's to spell.
  await checkTargetUrl(request.url, 'url');
  const url = request.url;
  const events = WEBHOOK_EVENTS.filter((type) => (request.events ?? WEBHOOK_EVENTS).includes(type));
  const webhook: Webhook = { id: newId('wh'), url, events, created_at: new Date().toISOString() };
  const secret = newSigningSecret();
  // The secret first: a webhook is never listed (or delivered to) without one.
  await store.writeSecret(webhook.id, secret);
  let inserted: boolean;
  try {
    inserted = await store.insert(webhook, MAX_WEBHOOKS);
  } catch (error) {
    await store.deleteSecret(webhook.id).catch(() => undefined);
    throw error;
  }
  if (!inserted) {
    await store.deleteSecret(webhook.id);
    throw new InvalidInputError(`an organization may have at most ${MAX_WEBHOOKS} webhooks; delete one first`);
  }
  return { ...webhook, secret };
}

export async function readWebhook(store: WebhookStore, id: string): Promise<Webhook> {
  const webhook = await store.get(id);
  if (!webhook) throw notFound(id);
  return webhook;
}

export async function listWebhooks(store: WebhookStore): Promise<Webhook[]> {
  return store.list();
}

/** Deletes a webhook and its secret: its pending retries find it gone and stop. */
export async function deleteWebhook(store: WebhookStore, id: string): Promise<void> {
  if (!(await store.delete(id))) throw notFound(id);
  await store.deleteSecret(id);
}

/** A page of a webhook's delivery attempts, newest first; its cursors are bound to the webhook. */
export async function readDeliveries(store: WebhookStore, id: string, after: string | undefined, limit: number) {
  const position = after ? await verify(store, 'deliveries', after) : undefined;
  if (position && (position.webhook !== id || typeof position.sk !== 'string')) throw new InvalidInputError('invalid pagination cursor');
  await readWebhook(store, id);
  const page = await store.deliveries(id, position?.sk as string | undefined, limit);
  return {
    deliveries: page.deliveries,
    ...(page.more && page.last ? { next_cursor: await sign(store, 'deliveries', { webhook: id, sk: page.last }) } : {}),
  };
}
