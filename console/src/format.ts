/** How numbers, times and JSON read in the console. */

const integer = new Intl.NumberFormat('en-US');

export function formatInteger(value: number): string {
  return integer.format(value);
}

/** `1.2 s`, `340 ms`, `3 min 4 s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** Between two timestamps; undefined while it has not ended. */
export function durationBetween(start: string, end: string | null | undefined): number | undefined {
  return end ? Date.parse(end) - Date.parse(start) : undefined;
}

export function formatUsd(value: number): string {
  if (value === 0) return '$0';
  return value < 0.01 ? `$${value.toPrecision(2)}` : `$${value.toFixed(value < 1 ? 4 : 2)}`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export function formatTokens(usage: { input_tokens: number; output_tokens: number } | null | undefined): string {
  if (!usage) return '';
  return `${formatInteger(usage.input_tokens)} in / ${formatInteger(usage.output_tokens)} out`;
}

/** A timestamp in the reader's time zone, to the second. */
export function formatTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** JSON for reading: two-space indented; text that is not JSON-able as is. */
export function prettyJson(value: unknown): string {
  if (value === undefined) return '';
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** JSON with object keys sorted at every level, for comparing configurations line by line. */
export function canonicalJson(value: unknown): string {
  const sorted = (item: unknown): unknown => {
    if (Array.isArray(item)) return item.map(sorted);
    if (item && typeof item === 'object') {
      return Object.fromEntries(Object.keys(item).sort().map((key) => [key, sorted((item as Record<string, unknown>)[key])]));
    }
    return item;
  };
  return JSON.stringify(sorted(value), null, 2);
}
