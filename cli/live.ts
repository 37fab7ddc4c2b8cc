/** The live view of a followed invocation: its attempts and spans as a tree that grows as events arrive. */
import type { Attempt, InvocationEndedEvent, Span, TraceEvent, TraceUsage } from '../client/types';
import { write, type Stream } from './commands/shared';
import { attemptLine, duration, spanLine, spanTree, tokens } from './render';

/** How often a terminal's view redraws, so running times tick. */
const TICK_MS = 250;

/** What the events of one invocation said so far. */
export class InvocationState {
  /** By number. */
  readonly attempts = new Map<number, Attempt>();
  /** By id, in the order they started. */
  readonly spans = new Map<string, Span>();
  ended: InvocationEndedEvent | undefined;

  apply(event: TraceEvent): void {
    if (event.type === 'attempt_started' || event.type === 'attempt_ended') this.attempts.set(event.attempt.number, event.attempt);
    else if (event.type === 'span_started' || event.type === 'span_ended') this.spans.set(event.span.id, event.span);
    else if (event.type === 'invocation_ended') this.ended = event;
  }
}

/** The attempt a span belongs to, from its id (`inv-2.att-1.3` is attempt 1). */
function attemptOf(span: Span): number {
  return Number(/\.att-(\d+)\./.exec(span.id)?.[1] ?? 0);
}

function total(usages: readonly (TraceUsage | null)[]): TraceUsage {
  return usages.reduce<TraceUsage>((sum, usage) => ({ input_tokens: sum.input_tokens + (usage?.input_tokens ?? 0), output_tokens: sum.output_tokens + (usage?.output_tokens ?? 0) }), {
    input_tokens: 0,
    output_tokens: 0,
  });
}

/**
 * The tree as lines: each attempt with its spans under it (a tool call under the model call
 * that requested it), running ones timed to `now`, and the outcome last once it ended.
 */
export function liveTree(state: InvocationState, now: number): string[] {
  const byAttempt = new Map<number, Span[]>();
  for (const span of state.spans.values()) byAttempt.set(attemptOf(span), [...(byAttempt.get(attemptOf(span)) ?? []), span]);
  const numbers = [...new Set([...state.attempts.keys(), ...byAttempt.keys()])].sort((a, b) => a - b);
  const lines: string[] = [];
  const used: TraceUsage[] = [];
  for (const number of numbers) {
    const spans = byAttempt.get(number) ?? [];
    const attempt = state.attempts.get(number);
    // A running attempt has used what its ended spans used.
    const usage = attempt?.ended_at ? attempt.usage : total(spans.map((span) => span.usage));
    used.push(usage);
    lines.push(attempt ? `attempt ${attemptLine({ ...attempt, usage }, now)}` : `attempt #${number}`);
    lines.push(...spanTree(spans, '  ', (span) => spanLine(span, now)));
  }
  const ended = state.ended;
  if (ended) {
    const starts = [...state.attempts.values()].map((attempt) => Date.parse(attempt.started_at));
    const took = starts.length ? duration(Date.parse(ended.time) - Math.min(...starts)) : undefined;
    const failure = ended.failure && `${ended.failure.kind}: ${ended.failure.message}`;
    lines.push(['invocation', ended.status, took, numbers.length ? tokens(total(used)) : undefined, failure].filter(Boolean).join('  '));
  } else if (numbers.length === 0) {
    lines.push('waiting for the invocation to start');
  }
  return lines;
}

function fit(line: string, width: number): string {
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

/**
 * Lines drawn in place at the bottom of a terminal, each draw replacing the last. Lines that
 * no longer fit the terminal's height cannot be reached again: they stay as last drawn.
 */
export class Screen {
  /** Lines on the screen the next draw replaces. */
  private live = 0;
  /** Leading lines left behind. */
  private kept = 0;

  constructor(private readonly stream: Stream) {}

  draw(lines: readonly string[]): void {
    const room = Math.max(1, (this.stream.rows ?? 24) - 1);
    const width = Math.max(10, (this.stream.columns ?? 80) - 1);
    const fresh = lines.slice(this.kept);
    const leave = Math.max(0, fresh.length - room);
    // Up to the first line drawn last time, clear to the end of the screen, draw (lines cut to fit: a wrapped line would break the count).
    const up = this.live ? `\x1b[${this.live}F` : '\r';
    this.stream.write(`${up}\x1b[J${fresh.map((line) => `${fit(line, width)}\n`).join('')}`);
    this.kept += leave;
    this.live = fresh.length - leave;
  }
}

/** Where followed events go. */
export interface EventView {
  show(event: TraceEvent): void;
  /** The last draw; nothing is drawn afterwards. */
  close(): void;
}

/** The tree on `stream`: redrawn as events arrive and time passes on a terminal, else drawn once when closed. */
export function treeView(stream: Stream, now: () => number = Date.now): EventView {
  const state = new InvocationState();
  if (!stream.isTTY) return { show: (event) => state.apply(event), close: () => write(stream, liveTree(state, now()).join('\n')) };
  const screen = new Screen(stream);
  let closed = false;
  let pending = false;
  const draw = () => {
    pending = false;
    if (!closed) screen.draw(liveTree(state, now()));
  };
  draw();
  const timer = setInterval(draw, TICK_MS);
  return {
    show(event) {
      state.apply(event);
      // One draw for a page of events: after the ones already delivered are applied.
      if (!pending) setImmediate(draw);
      pending = true;
    },
    close() {
      clearInterval(timer);
      draw();
      closed = true;
    },
  };
}

/** Each event as one line of JSON on `stream`. */
export function jsonLinesView(stream: Stream): EventView {
  return { show: (event) => write(stream, JSON.stringify(event)), close: () => {} };
}
