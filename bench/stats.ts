/** Small helpers every benchmark uses to time things and print figures. */

/** Milliseconds each call of `fn` took, after `warmup` untimed calls. */
export async function sample(count: number, fn: () => Promise<unknown>, warmup = Math.min(50, count)): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return times;
}

/** The p-th percentile (0..100) of a sample, nearest rank. */
export function percentile(times: number[], p: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

export interface Figures {
  p50: number;
  p99: number;
}

export function figures(times: number[]): Figures {
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** Prints rows of `label, p50, p99` plus each row's ratio to the baseline row. */
export function printComparison(title: string, rows: [string, Figures][], baseline: Figures): void {
  console.log(`\n${title}`);
  console.log(`${'measurement'.padEnd(44)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'p50 ×'.padStart(7)} ${'p99 ×'.padStart(7)}`);
  for (const [label, f] of rows) {
    const ratio = (a: number, b: number) => (a / b).toFixed(2);
    console.log(
      `${label.padEnd(44)} ${f.p50.toFixed(2).padStart(8)} ${f.p99.toFixed(2).padStart(8)} ${ratio(f.p50, baseline.p50).padStart(7)} ${ratio(f.p99, baseline.p99).padStart(7)}`,
    );
  }
}
