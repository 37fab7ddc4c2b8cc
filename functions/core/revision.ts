/** Revisions: each distinct agent configuration under a name. */
import { sha256 } from '#kit/ids';

/** JSON with object keys sorted at every depth, so equal configurations serialize equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The revision identifier: the first 16 hex characters of the SHA-256 of the canonical JSON. */
export function revisionOf(config: unknown): string {
  return sha256(canonicalJson(config)).slice(0, 16);
}
