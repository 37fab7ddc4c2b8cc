/**
 * Secret values inside a run: references resolved where the configuration allows them,
 * and values redacted from everything recorded (spans, logs, the final answer).
 */
import { InvalidInputError } from '#core/errors';
import { SECRET_REFERENCE, secretReferences } from '#contracts/agent';
import type { Redactor } from './types';

// A marker this redactor wrote. Values found only inside one are not secrets showing
// through, so redacting twice (a tool result, then the request that carries it) is safe.
const MARKER = /\[REDACTED:[A-Za-z0-9_.-]{1,128}\]/g;

interface Needle {
  text: string;
  name: string;
}

interface Hit {
  start: number;
  end: number;
  name: string;
}

/** Substitutes every `{{secret:NAME}}` in the text; throws for a name the run does not hold. */
export function resolveReferences(text: string, secrets: ReadonlyMap<string, string>): string {
  const missing = secretReferences(text).find((name) => !secrets.has(name));
  if (missing !== undefined) throw new InvalidInputError(`secret ${missing} is referenced but the organization has no such secret`);
  return text.replace(SECRET_REFERENCE, (_reference, name: string) => secrets.get(name)!);
}

function occurrences(text: string, needle: Needle): Hit[] {
  const hits: Hit[] = [];
  // Step by one, not by the needle's length: overlapping occurrences must all be covered.
  for (let at = text.indexOf(needle.text); at !== -1; at = text.indexOf(needle.text, at + 1)) {
    hits.push({ start: at, end: at + needle.text.length, name: needle.name });
  }
  return hits;
}

function redactString(text: string, needles: Needle[]): string {
  const markers = [...text.matchAll(MARKER)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
  const hits = needles
    .flatMap((needle) => occurrences(text, needle))
    .filter((hit) => !markers.some((m) => hit.start >= m.start && hit.end <= m.end))
    .sort((a, b) => a.start - b.start);
  if (hits.length === 0) return text;
  // Overlapping secrets are cut out as one span, so no fragment of either shows.
  let out = '';
  let cursor = 0;
  for (let i = 0; i < hits.length; ) {
    const names = new Set<string>();
    let end = hits[i]!.end;
    const start = hits[i]!.start;
    for (; i < hits.length && hits[i]!.start < end; i++) {
      names.add(hits[i]!.name);
      end = Math.max(end, hits[i]!.end);
    }
    out += text.slice(cursor, start) + [...names].map((name) => `[REDACTED:${name}]`).join('');
    cursor = end;
  }
  return out + text.slice(cursor);
}

/** A redactor for these resolved secrets (name to value); every value is redacted, however short. */
export function createRedactor(secrets: ReadonlyMap<string, string>): Redactor {
  const needles: Needle[] = [];
  for (const [name, value] of secrets) {
    // Also the value as it appears inside JSON text, e.g. a tool result that is a JSON document.
    for (const text of new Set([value, JSON.stringify(value).slice(1, -1)])) {
      if (text !== '') needles.push({ text, name });
    }
  }
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return redactString(value, needles);
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== 'object') return value;
    const toJSON = (value as { toJSON?: () => unknown }).toJSON;
    if (typeof toJSON === 'function') return walk(toJSON.call(value));
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [redactString(key, needles), walk(inner)]));
  };
  return { redact: <T>(value: T) => (needles.length === 0 ? value : (walk(value) as T)) };
}
