/** Secrets: values agents reference as {{secret:NAME}}; only masked values come back. */
import { path, type RequestOptions, type Transport } from '../core';
import type { Secret, SecretCreateParams, SecretListResponse, SecretUpdateParams } from '../types';

export class Secrets {
  constructor(private readonly transport: Transport) {}

  /** Stores a new secret (400 when the name exists: rotate with `update`). Not re-sent once it may have arrived. */
  async create(params: SecretCreateParams, options: RequestOptions = {}): Promise<Secret> {
    return this.transport.post<Secret>({ path: '/secrets', body: JSON.stringify(params) }, options);
  }

  /** Every secret, masked. */
  async list(options: RequestOptions = {}): Promise<SecretListResponse> {
    return this.transport.get<SecretListResponse>({ path: '/secrets' }, options);
  }

  /** One secret, masked. */
  async get(name: string, options: RequestOptions = {}): Promise<Secret> {
    return this.transport.get<Secret>({ path: path`/secrets/${name}` }, options);
  }

  /** Rotates a secret's value. */
  async update(name: string, params: SecretUpdateParams, options: RequestOptions = {}): Promise<Secret> {
    return this.transport.put<Secret>({ path: path`/secrets/${name}`, body: JSON.stringify(params) }, options);
  }

  /** Deletes a secret. */
  async delete(name: string, options: RequestOptions = {}): Promise<void> {
    await this.transport.delete({ path: path`/secrets/${name}` }, options);
  }
}
