/** Models: the deployment's catalogue. */
import type { RequestOptions, Transport } from '../core';
import type { ModelListResponse } from '../types';

export class Models {
  constructor(private readonly transport: Transport) {}

  /** The models agents can run on. */
  async list(options: RequestOptions = {}): Promise<ModelListResponse> {
    return this.transport.get<ModelListResponse>({ path: '/models' }, options);
  }
}
