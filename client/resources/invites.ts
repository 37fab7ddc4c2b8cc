/** Invites (admin users only). */
import type { RequestOptions, Transport } from '../core';
import type { Invite, InviteCreateParams } from '../types';

export class Invites {
  constructor(private readonly transport: Transport) {}

  /**
   * Invites `email` into `organization_id`, or to found a new organization without it.
   * Sent with an Idempotency-Key (made here when not given), so a re-send returns the same invite.
   */
  async create(params: InviteCreateParams, options: RequestOptions = {}): Promise<Invite> {
    const { idempotency_key, ...body } = params;
    const idempotencyKey = idempotency_key ?? crypto.randomUUID();
    return this.transport.post<Invite>({ path: '/invites', body: JSON.stringify(body), idempotencyKey }, options);
  }
}
