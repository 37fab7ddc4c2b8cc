/** Identifiers and digests. */
import { createHash, randomBytes } from 'node:crypto';

/** A random identifier like `org_3f9k2...`: a prefix naming the kind, then 20 base32 characters. */
export function newId(prefix: string): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  const bytes = randomBytes(20);
  let id = '';
  for (const byte of bytes) id += alphabet[byte & 31];
  return `${prefix}_${id}`;
}

/** Hex SHA-256 of a string or bytes. */
export function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

let lastEventTime = 0;

/**
 * The time of an event this process records, strictly after the last one it recorded:
 * audit events sort by time, so two recorded within one millisecond keep their order.
 */
export function eventTime(): string {
  lastEventTime = Math.max(Date.now(), lastEventTime + 1);
  return new Date(lastEventTime).toISOString();
}
