/** Integrations: where finished invocations are sent besides the service's own traces. */
import type { RequestOptions, Transport } from '../core';
import type { OtlpIntegrationSetParams, OtlpSettings } from '../types';

const OTLP_PATH = '/integrations/otlp';

/** The OTLP export: every finished invocation as one OTLP trace, to an OTLP/HTTP traces endpoint. */
export class OtlpIntegration {
  constructor(private readonly transport: Transport) {}

  /** Replaces the settings (`payloads` false unless given); answers them as stored, secret references unresolved. */
  async set(params: OtlpIntegrationSetParams, options: RequestOptions = {}): Promise<OtlpSettings> {
    return this.transport.put<OtlpSettings>({ path: OTLP_PATH, body: JSON.stringify(params) }, options);
  }

  /** The settings; `NotFoundError` while there are none. */
  async get(options: RequestOptions = {}): Promise<OtlpSettings> {
    return this.transport.get<OtlpSettings>({ path: OTLP_PATH }, options);
  }

  /** Stops exporting. */
  async delete(options: RequestOptions = {}): Promise<void> {
    await this.transport.delete({ path: OTLP_PATH }, options);
  }
}

export class Integrations {
  readonly otlp: OtlpIntegration;

  constructor(transport: Transport) {
    this.otlp = new OtlpIntegration(transport);
  }
}
