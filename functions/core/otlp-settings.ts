/**
 * An organization's OTLP export settings (/integrations/otlp): where every finished
 * invocation's trace goes, with which headers. Header values may reference secrets as
 * `{{secret:NAME}}`; the settings keep the references, and only the export resolves them.
 */
import { secretReferences } from '#contracts/agent';
import { InvalidInputError, NotFoundError } from './errors';
import { checkTargetUrl } from './outbound';

export interface OtlpSettings {
  endpoint: string;
  headers?: Record<string, string>;
  payloads: boolean;
}

export interface OtlpSettingsStore {
  get(): Promise<OtlpSettings | undefined>;
  put(settings: OtlpSettings): Promise<void>;
  delete(): Promise<void>;
  /** Whether the organization holds a secret of this name. */
  hasSecret(name: string): Promise<boolean>;
}

/** The path an OTLP/HTTP traces endpoint ends in. */
const TRACES_PATH = '/v1/traces';

/** Stores the settings as given (references unresolved), after checking the endpoint and every reference. */
export async function putOtlpSettings(store: OtlpSettingsStore, request: { endpoint: string; headers?: Record<string, string>; payloads?: boolean }): Promise<OtlpSettings> {
  const url = await checkTargetUrl(request.endpoint, 'endpoint');
  if (!url.pathname.endsWith(TRACES_PATH) || url.search || url.hash) {
    throw new InvalidInputError(`endpoint must be an OTLP/HTTP traces URL ending in ${TRACES_PATH}`);
  }
  const names = new Set<string>();
  for (const [header, value] of Object.entries(request.headers ?? {})) {
    try {
      for (const name of secretReferences(value)) names.add(name);
    } catch (error) {
      throw new InvalidInputError(`headers.${header}: ${(error as Error).message}`);
    }
  }
  for (const name of names) {
    if (!(await store.hasSecret(name))) throw new InvalidInputError(`headers reference secret ${name}, which the organization does not have`);
  }
  const settings: OtlpSettings = {
    endpoint: request.endpoint,
    ...(request.headers ? { headers: request.headers } : {}),
    payloads: request.payloads ?? false,
  };
  await store.put(settings);
  return settings;
}

export async function readOtlpSettings(store: OtlpSettingsStore): Promise<OtlpSettings> {
  const settings = await store.get();
  if (!settings) throw new NotFoundError('no OTLP export is configured');
  return settings;
}

/** Removes the settings; exports still pending find none and stop. Nothing configured is fine. */
export async function deleteOtlpSettings(store: OtlpSettingsStore): Promise<void> {
  await store.delete();
}
