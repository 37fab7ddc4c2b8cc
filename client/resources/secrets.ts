/** Secrets: values agents reference as {{secret:NAME}}; only masked values come back. */
import { path, type RequestOptions, type Transport } from '../core';
import type { Secret, SecretCreateParams, SecretListResponse, SecretUpdateParams } from '../types';

export class Secrets {
  constructor(private readonly transport: Transport) {}

  /** Stores a new secret (400 when the name exists: rotate with `update`). Not re-sent once it may have arrived. */
  async create(params: SecretCreateParams, options: RequestOptions = {}): Promise<Secret> {
    return (await this.transport.request<Secret>({ method: 'POST', path: '/secrets', body: JSON.stringify(params), retry: 'unsent-only' }, options)).body;
  }

  /** Every secret, masked. */
  async list(options: RequestOptions = {}): Promise<SecretListResponse> {
    return (await this.transport.request<SecretListResponse>({ method: 'GET', path: '/secrets', retry: 'idempotent' }, options)).body;
  }

  /** One secret, masked. */
  async get(name: string, options: RequestOptions = {}): Promise<Secret> {
    return (await this.transport.request<Secret>({ method: 'GET', path: path`/secrets/${name}`, retry: 'idempotent' }, options)).body;
  }

  /** Rotates a secret's value. */
  async update(name: string, params: SecretUpdateParams, options: RequestOptions = {}): Promise<Secret> {
    return (await this.transport.request<Secret>({ method: 'PUT', path: path`/secrets/${name}`, body: JSON.stringify(params), retry: 'unsent-only' }, options)).body;
  }

  /** Deletes a secret. */
  async delete(name: string, options: RequestOptions = {}): Promise<void> {
    await this.transport.request({ method: 'DELETE', path: path`/secrets/${name}`, retry: 'idempotent' }, options);
  }
}
