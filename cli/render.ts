/** Plain-text rendering for people: tables, a session transcript, a trace tree. */
import type { Attempt, AuditEvent, Message, Session, Span, TraceGetResponse } from '../client/types';

export interface Column<Row> {
  header: string;
  value: (row: Row) => string | number | boolean | undefined | null;
  /** Longer cells are cut with an ellipsis (default 60). */
  max?: number;
}

function cell(value: string | number | boolean | undefined | null, max: number): string {
  const text = value === undefined || value === null ? '-' : String(value).replace(/\s+/g, ' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** An aligned table with a header row; `(none)` when there are no rows. */
export function table<Row>(rows: readonly Row[], columns: readonly Column<Row>[]): string {
  if (rows.length === 0) return '(none)\n';
  const cells = rows.map((row) => columns.map((column) => cell(column.value(row), column.max ?? 60)));
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((line) => line[i]!.length)));
  const line = (values: string[]) => values.map((value, i) => (i === values.length - 1 ? value : value.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(columns.map((column) => column.header.toUpperCase())), ...cells.map(line)].join('\n') + '\n';
}

/** `name: value` lines, aligned, skipping absent values. */
export function fields(entries: [string, string | number | boolean | undefined | null][]): string {
  const present = entries.filter(([, value]) => value !== undefined && value !== null);
  const width = Math.max(...present.map(([name]) => name.length));
  return present.map(([name, value]) => `${`${name}:`.padEnd(width + 1)} ${value}`).join('\n') + '\n';
}

/** A duration for people: `850ms`, `12.3s`, `4m 05s`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
}

/** How long from `start` to `end`; without an end, until `now` when given, else "running". */
export function elapsed(start: string, end: string | null | undefined, now?: number): string {
  if (end) return duration(Date.parse(end) - Date.parse(start));
  return now === undefined ? 'running' : duration(now - Date.parse(start));
}

/** Token usage for people: `120 in / 30 out tokens`. */
export function tokens(usage: { input_tokens: number; output_tokens: number } | null | undefined): string | undefined {
  return usage ? `${usage.input_tokens} in / ${usage.output_tokens} out tokens` : undefined;
}

/** A cost in USD for people: `$0.0123` below a dollar, `$12.35` above. */
export function usd(cost: number | undefined): string | undefined {
  if (cost === undefined) return undefined;
  return `$${cost.toFixed(cost < 1 ? 4 : 2)}`;
}

/** The session's facts and its messages as a transcript. */
export function transcript(session: Session, messages: readonly Message[]): string {
  const head = fields([
    ['session', session.id],
    ['state', session.state],
    ['invocations', session.invocation_count],
    ['agent', session.agent_name && `${session.agent_name}${session.agent_revision ? ` (revision ${session.agent_revision})` : ''}`],
    ['running', session.current_invocation_key],
    ['updated', session.updated_at],
  ]);
  const body = messages.map((message) => {
    const content = message.content.replace(/\n/g, '\n    ');
    return `[${message.cursor}] ${message.role} · ${message.created_at} · ${message.invocation_key}\n    ${content}`;
  });
  return `${head}\n${body.length ? body.join('\n\n') : '(no messages)'}\n`;
}

/** Audit events as a table. */
export function auditTable(events: readonly AuditEvent[]): string {
  return table(events, [
    { header: 'time', value: (e) => e.event_time },
    { header: 'type', value: (e) => e.type },
    { header: 'invocation', value: (e) => e.invocation_key, max: 40 },
    { header: 'payload', value: (e) => JSON.stringify(e.payload), max: 80 },
  ]);
}

function compact(value: unknown, max: number): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return cell(text, max);
}

/** An attempt on one line; a running one's time runs to `now` when given. */
export function attemptLine(attempt: Attempt, now?: number): string {
  const parts = [`#${attempt.number}`, attempt.status, elapsed(attempt.started_at, attempt.ended_at, now), tokens(attempt.usage)];
  if (attempt.failure) parts.push(`${attempt.failure.kind}: ${attempt.failure.message}`);
  return parts.filter(Boolean).join('  ');
}

/** A span on one line; a running one's time runs to `now` when given. */
export function spanLine(span: Span, now?: number): string {
  const parts = [span.type, span.name, span.status, elapsed(span.started_at, span.ended_at, now), tokens(span.usage), span.superseded ? '(superseded)' : undefined, `[${span.id}]`];
  return parts.filter(Boolean).join('  ');
}

/**
 * Spans as tree lines under `indent`: a tool call under the model call that requested it,
 * a span whose parent is not in `spans` at the top; `under` adds lines beneath a span.
 */
export function spanTree(spans: readonly Span[], indent: string, line: (span: Span) => string, under: (span: Span, inner: string) => string[] = () => []): string[] {
  const ids = new Set(spans.map((span) => span.id));
  const children = new Map<string | null, Span[]>();
  for (const span of spans) {
    const parent = span.parent_id && ids.has(span.parent_id) ? span.parent_id : null;
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const lines: string[] = [];
  const walk = (parent: string | null, prefix: string) => {
    const list = children.get(parent) ?? [];
    list.forEach((span, i) => {
      const last = i === list.length - 1;
      lines.push(`${prefix}${last ? '└─ ' : '├─ '}${line(span)}`);
      const inner = `${prefix}${last ? '   ' : '│  '}`;
      lines.push(...under(span, inner));
      walk(span.id, inner);
    });
  };
  walk(null, indent);
  return lines;
}

/**
 * The trace: its summary, its attempts, and its spans as a tree (a tool call under the
 * model call that requested it). A span whose parent is not in `spans` is a root.
 * With payloads, each span's input and output follow it on one line each.
 */
export function traceTree(trace: Omit<TraceGetResponse, 'spans' | 'next_cursor'>, spans: readonly Span[], { width = 100 } = {}): string {
  const lines = [
    fields([
      ['trace', trace.invocation_key],
      ['status', trace.status],
      ['session', `${trace.session_id} (invocation ${trace.session_position})`],
      ['agent', trace.agent_name && `${trace.agent_name}${trace.agent_revision ? ` (revision ${trace.agent_revision})` : ''}`],
      ['started', trace.started_at],
      ['duration', elapsed(trace.started_at, trace.ended_at)],
      ['tokens', tokens(trace.usage)?.replace(/ tokens$/, '')],
      ['cost', usd(trace.cost_usd)],
      ['failure', trace.failure && `${trace.failure.kind}: ${trace.failure.message}`],
    ]).trimEnd(),
  ];
  if (trace.attempts?.length) lines.push('attempts:', ...trace.attempts.map((attempt) => `  ${attemptLine(attempt)}`));
  if (trace.spans_expired) {
    lines.push('spans: expired (older than the retention window)');
    return lines.join('\n') + '\n';
  }
  lines.push(spans.length ? 'spans:' : 'spans: (none yet)');
  const payloads = (span: Span, inner: string) => {
    const room = Math.max(20, width - inner.length - 8);
    return [
      ...('input' in span ? [`${inner}  in:  ${compact(span.input, room)}`] : []),
      ...('output' in span ? [`${inner}  out: ${compact(span.output, room)}`] : []),
    ];
  };
  lines.push(...spanTree(spans, '  ', (span) => spanLine(span), payloads));
  return lines.join('\n') + '\n';
}
