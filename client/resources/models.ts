/** Models: the deployment's catalogue. */
import type { RequestOptions, Transport } from '../core';
import type { ModelListResponse } from '../types';

export class Models {
  constructor(private readonly transport: Transport) {}

  /** The models agents can run on. */
  async list(options: RequestOptions = {}): Promise<ModelListResponse> {
    return (await this.transport.request<ModelListResponse>({ method: 'GET', path: '/models', retry: 'idempotent' }, options)).body;
  }
}
