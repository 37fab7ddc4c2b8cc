/** Whether the service can serve: its table and its payload bucket both answer. */
import type { Logger } from '#kit/log';

/** The service's dependencies, each answering a cheap read or rejecting. */
export interface HealthProbes {
  table(signal: AbortSignal): Promise<void>;
  bucket(signal: AbortSignal): Promise<void>;
}

const PROBE_TIMEOUT_MS = 3_000;

/** Undefined when healthy, else what is unreachable (no internals). */
export async function checkHealth(probes: HealthProbes, log?: Logger): Promise<string | undefined> {
  const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
  const [table, bucket] = await Promise.allSettled([probes.table(signal), probes.bucket(signal)]);
  const down = [table.status === 'rejected' ? 'table' : '', bucket.status === 'rejected' ? 'payload bucket' : ''].filter(Boolean);
  for (const [name, outcome] of [['table', table], ['bucket', bucket]] as const) {
    if (outcome.status === 'rejected') log?.warn('health probe failed', { dependency: name, error: String(outcome.reason?.name ?? outcome.reason) });
  }
  return down.length ? `the ${down.join(' and ')} cannot be reached` : undefined;
}
