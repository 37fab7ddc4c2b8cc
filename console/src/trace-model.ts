/**
 * The trace page's model, apart from rendering: spans by id (from pages and from live
 * events), the tree rows to show, the timeline's scale, and the payloads fetched on demand.
 */
import type { Attempt, Span, TraceEvent } from '../../client/index';

/** Where a span sits: `inv-<position>.att-<attempt>.<seq>`. */
export function spanPosition(id: string): { attempt: number; seq: number } {
  const match = /\.att-(\d+)\.(\d+)$/.exec(id);
  return match ? { attempt: Number(match[1]), seq: Number(match[2]) } : { attempt: 0, seq: 0 };
}

function byPosition(a: Span, b: Span): number {
  const left = spanPosition(a.id);
  const right = spanPosition(b.id);
  return left.attempt - right.attempt || left.seq - right.seq;
}

export interface SpanRow {
  span: Span;
  depth: number;
  /** How many spans hang under this one (tool calls under the model call that asked for them). */
  children: number;
  /** Its children are hidden. */
  collapsed: boolean;
  superseded: boolean;
}

/**
 * The rows of the tree in display order: each span followed by its children, depth first,
 * oldest first; spans of attempts before `latestAttempt` only when `showSuperseded`, and no
 * children of a collapsed span.
 */
export function treeRows(spans: Iterable<Span>, options: { latestAttempt: number; showSuperseded: boolean; collapsed: ReadonlySet<string> }): SpanRow[] {
  const visible = [...spans]
    .filter((span) => options.showSuperseded || spanPosition(span.id).attempt >= options.latestAttempt)
    .sort(byPosition);
  const ids = new Set(visible.map((span) => span.id));
  const children = new Map<string, Span[]>();
  const roots: Span[] = [];
  for (const span of visible) {
    if (span.parent_id && ids.has(span.parent_id)) {
      const siblings = children.get(span.parent_id) ?? [];
      siblings.push(span);
      children.set(span.parent_id, siblings);
    } else {
      roots.push(span);
    }
  }
  const rows: SpanRow[] = [];
  const visit = (span: Span, depth: number) => {
    const under = children.get(span.id) ?? [];
    const collapsed = options.collapsed.has(span.id);
    rows.push({ span, depth, children: under.length, collapsed, superseded: span.superseded === true || spanPosition(span.id).attempt < options.latestAttempt });
    if (!collapsed) for (const child of under) visit(child, depth + 1);
  };
  for (const root of roots) visit(root, 0);
  return rows;
}

/** The timeline's extent: from the first start to the last end (now for what still runs). */
export function timelineOf(spans: readonly Span[], now: number): { start: number; end: number } {
  let start = Infinity;
  let end = -Infinity;
  for (const span of spans) {
    start = Math.min(start, Date.parse(span.started_at));
    end = Math.max(end, span.ended_at ? Date.parse(span.ended_at) : now);
  }
  if (!Number.isFinite(start)) return { start: now, end: now + 1 };
  return { start, end: Math.max(end, start + 1) };
}

/** A bar's place on the timeline, in percent of its width (at least a sliver, so instant spans show). */
export function barOf(span: Span, timeline: { start: number; end: number }, now: number): { left: number; width: number } {
  const total = timeline.end - timeline.start;
  const from = Date.parse(span.started_at) - timeline.start;
  const to = (span.ended_at ? Date.parse(span.ended_at) : now) - timeline.start;
  const left = Math.min(100, Math.max(0, (from / total) * 100));
  return { left, width: Math.max(0.3, Math.min(100 - left, ((to - from) / total) * 100)) };
}

/**
 * Tokens used so far while an invocation runs: the summary's sum counts attempts as they
 * end, the spans as each call ends; the larger of the two, field by field.
 */
export function usageSoFar(spans: Iterable<Span>, summary: { input_tokens: number; output_tokens: number }): { input_tokens: number; output_tokens: number } {
  let input = 0;
  let output = 0;
  for (const span of spans) {
    input += span.usage?.input_tokens ?? 0;
    output += span.usage?.output_tokens ?? 0;
  }
  return { input_tokens: Math.max(input, summary.input_tokens), output_tokens: Math.max(output, summary.output_tokens) };
}

/** Adds or updates a span; an ended span is never set back to running by an older view of it. */
export function mergeSpan(spans: Map<string, Span>, span: Span): void {
  const known = spans.get(span.id);
  if (known?.ended_at && !span.ended_at) {
    if (span.superseded && !known.superseded) spans.set(span.id, { ...known, superseded: true });
    return;
  }
  spans.set(span.id, { ...known, ...span });
}

/** Adds or updates an attempt, as `mergeSpan` does a span. */
export function mergeAttempt(attempts: Map<number, Attempt>, attempt: Attempt): void {
  if (attempts.get(attempt.number)?.ended_at && !attempt.ended_at) return;
  attempts.set(attempt.number, attempt);
}

/** Folds a live event into the spans and attempts. */
export function applyEvent(spans: Map<string, Span>, attempts: Map<number, Attempt>, event: TraceEvent): void {
  switch (event.type) {
    case 'span_started':
    case 'span_ended':
      mergeSpan(spans, event.span);
      return;
    case 'attempt_started':
    case 'attempt_ended':
      mergeAttempt(attempts, event.attempt);
      return;
    default:
      return;
  }
}

/** The payload fields of one span (`payloads=true`). */
export type SpanPayloads = Pick<Span, 'input' | 'input_bytes' | 'input_sha256' | 'input_truncated' | 'output' | 'output_bytes' | 'output_sha256' | 'output_truncated'>;

/** Spans whose payloads stay in memory (the latest fetched); others are fetched again. */
const KEPT_SPANS = 200;

/**
 * A span's payloads, fetched on demand one span at a time (`GET /traces/{key}/spans/{id}`),
 * so any span of a long trace opens in one request; the latest ones fetched are kept.
 */
export class PayloadLoader {
  private readonly kept = new Map<string, SpanPayloads>();

  /** `fetchSpan` answers undefined for a span not readable (yet: spans become readable seconds after they happen). */
  constructor(private readonly fetchSpan: (spanId: string) => Promise<Span | undefined>) {}

  /** The span's payloads; undefined when it is not readable yet. A span still running is fetched again each time. */
  async get(span: Span): Promise<SpanPayloads | undefined> {
    const cached = this.kept.get(span.id);
    if (cached && span.ended_at !== null) {
      this.keep(span.id, cached);
      return cached;
    }
    const read = await this.fetchSpan(span.id);
    if (!read) return undefined;
    const { input, input_bytes, input_sha256, input_truncated, output, output_bytes, output_sha256, output_truncated } = read;
    const payloads = { input, input_bytes, input_sha256, input_truncated, output, output_bytes, output_sha256, output_truncated };
    // Kept once the span has ended: its output does not change after.
    if (read.ended_at !== null) this.keep(span.id, payloads);
    return payloads;
  }

  private keep(id: string, payloads: SpanPayloads): void {
    this.kept.delete(id);
    this.kept.set(id, payloads);
    for (const oldest of this.kept.keys()) {
      if (this.kept.size <= KEPT_SPANS) break;
      this.kept.delete(oldest);
    }
  }
}
