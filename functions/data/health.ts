/** The health probes over the table and the bucket (`core/health.ts` declares them). */
import type { HealthProbes } from '#core/health';
import { probeTable } from './dynamo';
import { probeBucket } from './payloads';

export const healthProbes: HealthProbes = { table: probeTable, bucket: probeBucket };
