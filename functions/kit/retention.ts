/**
 * The span retention window (SPAN_RETENTION_SECONDS): spans, attempts and payloads of an
 * invocation are kept that long after it started. The cloud deletes them late (DynamoDB
 * TTL within days, S3 lifecycle at day granularity), so reads decide expiry from here.
 */
import { config } from './config';

/** Epoch seconds at which an invocation's spans and attempts expire (the items' `expires_at`). */
export function spansExpireAt(startedAt: string): number {
  return Math.floor(Date.parse(startedAt) / 1000) + config.spanRetentionSeconds;
}

/** True once an invocation's spans are older than the retention window. */
export function spansExpired(startedAt: string, now = Date.now()): boolean {
  return now >= spansExpireAt(startedAt) * 1000;
}
