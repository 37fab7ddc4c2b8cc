/**
 * The trace page's model, apart from rendering: spans by id (from pages and from live
 * events), the tree rows to show, the timeline's scale, and the payloads fetched on demand.
 */
import type { Attempt, Span, TraceEvent, TraceGetResponse } from '../../client/index';

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

type Mode = 'final' | 'all';

/** Payload pages hold 25 spans at most (the API's bound with payloads). */
const PAYLOAD_PAGE = 25;
/** Spans whose payloads stay in memory (the latest fetched); others are fetched again from their page's cursor. */
const KEPT_SPANS = 200;

interface PayloadPage {
  /** The cursor this page starts at (undefined for the first). */
  after: string | undefined;
  ids: string[];
}

/**
 * A span's payloads, fetched on demand. The API serves payloads only in pages of up to 25
 * from a signed cursor, so reaching a span walks the pages before it once; each page's
 * start cursor is remembered, so a span already passed is one request away after that.
 */
export class PayloadLoader {
  private readonly pages: Record<Mode, PayloadPage[]> = { final: [], all: [] };
  /** Where the walk goes on: undefined before the first page, null once the last page was read. */
  private readonly next: Record<Mode, string | undefined | null> = { final: undefined, all: undefined };
  private readonly kept = new Map<string, SpanPayloads>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly fetchPage: (mode: Mode, after: string | undefined, limit: number) => Promise<TraceGetResponse>) {}

  /** The span's payloads; undefined when no page holds it (yet: spans become readable seconds after they happen). */
  get(span: Span, latestAttempt: number): Promise<SpanPayloads | undefined> {
    // One walk at a time: two expansions never fetch the same pages twice.
    const result = this.queue.then(async () => {
      const mode: Mode = span.superseded || spanPosition(span.id).attempt < latestAttempt ? 'all' : 'final';
      return (await this.find(mode, span.id)) ?? (mode === 'final' ? this.find('all', span.id) : undefined);
    });
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async find(mode: Mode, id: string): Promise<SpanPayloads | undefined> {
    const cached = this.kept.get(id);
    if (cached) {
      this.keep(id, cached);
      return cached;
    }
    const known = this.pages[mode].find((page) => page.ids.includes(id));
    if (known) {
      await this.load(mode, known.after);
      return this.kept.get(id);
    }
    for (;;) {
      const after = this.next[mode];
      if (after === null) return undefined;
      const response = await this.load(mode, after);
      // A running invocation always has a next cursor: an empty page means nothing more is readable yet.
      if (response.spans.length === 0 && response.next_cursor) return undefined;
      const ids = response.spans.map((span) => span.id);
      this.pages[mode].push({ after, ids });
      this.next[mode] = response.next_cursor ?? null;
      if (ids.includes(id)) return this.kept.get(id);
    }
  }

  private keep(id: string, payloads: SpanPayloads): void {
    this.kept.delete(id);
    this.kept.set(id, payloads);
    for (const oldest of this.kept.keys()) {
      if (this.kept.size <= KEPT_SPANS) break;
      this.kept.delete(oldest);
    }
  }

  private async load(mode: Mode, after: string | undefined): Promise<TraceGetResponse> {
    const response = await this.fetchPage(mode, after, PAYLOAD_PAGE);
    for (const span of response.spans) {
      const { input, input_bytes, input_sha256, input_truncated, output, output_bytes, output_sha256, output_truncated } = span;
      this.keep(span.id, { input, input_bytes, input_sha256, input_truncated, output, output_bytes, output_sha256, output_truncated });
    }
    return response;
  }
}
