/** Webhooks: URLs told of every invocation's outcome, signed with a secret shown once; their delivery attempts. */
import { path, type RequestOptions, type Transport } from '../core';
import { PagePromise } from '../pagination';
import type {
  CreatedWebhook,
  Webhook,
  WebhookCreateParams,
  WebhookDeliveriesParams,
  WebhookDeliveriesResponse,
  WebhookDelivery,
  WebhookListResponse,
} from '../types';

export class Webhooks {
  constructor(private readonly transport: Transport) {}

  /** Adds a webhook; its `secret` is shown only in this answer. Not re-sent once it may have arrived (it would add two). */
  async create(params: WebhookCreateParams, options: RequestOptions = {}): Promise<CreatedWebhook> {
    return this.transport.post<CreatedWebhook>({ path: '/webhooks', body: JSON.stringify(params) }, options);
  }

  /** Every webhook of the organization (never a secret). */
  async list(options: RequestOptions = {}): Promise<WebhookListResponse> {
    return this.transport.get<WebhookListResponse>({ path: '/webhooks' }, options);
  }

  /** One webhook. */
  async get(id: string, options: RequestOptions = {}): Promise<Webhook> {
    return this.transport.get<Webhook>({ path: path`/webhooks/${id}` }, options);
  }

  /** Deletes a webhook; its pending retries stop. */
  async delete(id: string, options: RequestOptions = {}): Promise<void> {
    await this.transport.delete({ path: path`/webhooks/${id}` }, options);
  }

  /** The latest delivery attempts to webhook `id`, newest first; iterate for all of them. */
  deliveries(id: string, params: WebhookDeliveriesParams = {}, options: RequestOptions = {}): PagePromise<WebhookDeliveriesResponse, WebhookDelivery> {
    const deliveriesPath = path`/webhooks/${id}/deliveries`;
    const { after: start, limit } = params;
    return new PagePromise(
      (after) => this.transport.get<WebhookDeliveriesResponse>({ path: deliveriesPath, query: { after, limit } }, options),
      (page) => page.deliveries,
      start,
    );
  }
}
